// The built-in Pipe custom task: the SDK starts, times out, cancels and
// retries Pipe runs; this says what an attempt is from its ResolutionRequest
// (created on first sight, then read from the informer, whose events on it
// wake the run) and deletes that request when the run is cancelled or times
// out, so the garbage collector takes its pipe pod with it.
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import type { CustomTask, Step, TaskContext } from "@quarry/customtask-sdk";
import { isApiError, type KubeClient, type Lister } from "@quarry/kube";
import { requestResolution } from "@quarry/requester";
import { PIPE_TASK, pipeRequestFor, pipeStep } from "./pipe-run.ts";

export interface PipeTaskDeps {
  client: KubeClient;
  requests: Lister<ResolutionRequest>;
}

export class PipeTask implements CustomTask {
  readonly group = PIPE_TASK.group;
  readonly kind = PIPE_TASK.kind;
  /** A Pipe run names its Pipe. */
  readonly allowsRefName = true;
  private readonly deps: PipeTaskDeps;

  constructor(deps: PipeTaskDeps) {
    this.deps = deps;
  }

  async reconcile(ctx: TaskContext): Promise<Step> {
    const wanted = pipeRequestFor(ctx.run, ctx.attempt);
    if (!wanted.ok)
      return { type: "failed", reason: wanted.reason, message: wanted.message, retryable: false };
    const cached = this.deps.requests.getByKey(`${wanted.input.namespace}/${wanted.name}`);
    return pipeStep(ctx.run, cached ?? (await requestResolution(this.deps.client, wanted.input)));
  }

  /** The attempt's request goes, and with it (ownerReferences, background GC) its pod. */
  async stop(ctx: TaskContext): Promise<void> {
    const wanted = pipeRequestFor(ctx.run, ctx.attempt);
    if (!wanted.ok) return;
    try {
      await this.deps.client.delete(resolutionRequests, wanted.input.namespace, wanted.name, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        propagationPolicy: "Background",
      });
      ctx.log.info({ request: wanted.name }, "deleted the pipe request of a stopped run");
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
  }
}
