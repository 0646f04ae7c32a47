// Performs the run-controller's decisions for one run: creates (or adopts)
// its ResolutionRequest, writes Quarry's status fields and enforcements under
// optimistic locking (re-deciding from the latest object on conflict, so a
// custom-task controller's write that raced ours always wins), records Events
// and the enforcement metric. One reconciler per flavour (Run, CustomRun).
import { type AnyRun, type ResolutionRequest, runView } from "@quarry/api";
import { remoteRequest } from "@quarry/customtask-sdk/internal";
import {
  changedFields,
  type EventRecorder,
  errorMessage,
  type KubeClient,
  type Lister,
  lockedMergePatch,
  type ReconcileOutcome,
  type Reconciler,
} from "@quarry/kube";
import type { Logger } from "@quarry/observability";
import { RequestMismatchError, requestResolution } from "@quarry/requester";
import type { RunControllerConfig } from "./config.ts";
import { cancelRequestedAt, decide, type RunDecision, type RunWorld } from "./decide.ts";

export interface RunControllerDeps {
  client: KubeClient;
  runs: Lister<AnyRun>;
  requests: Lister<ResolutionRequest>;
  config: () => RunControllerConfig;
  recorder: EventRecorder;
  log: Logger;
  onEnforcement?: (reason: string, flavour: string) => void;
  now?: () => number;
}

export class RunReconciler implements Reconciler {
  private readonly deps: RunControllerDeps;
  /** Fallback for objects without managedFields: when this process first saw the cancel, by uid. */
  private readonly cancelSeen = new Map<string, number>();

  constructor(deps: RunControllerDeps) {
    this.deps = deps;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async reconcile(key: string): Promise<ReconcileOutcome | undefined> {
    const run = this.deps.runs.getByKey(key);
    if (!run) return undefined;
    let world = this.world(run);
    const first = decide(run, world);
    if (first.createRequest) {
      try {
        const created = await requestResolution(this.deps.client, first.createRequest);
        world = { ...world, request: created };
      } catch (err) {
        // someone else's request under the run's name: say so on the run instead of retrying forever
        if (!(err instanceof RequestMismatchError)) throw err;
        this.deps.log.warn(
          { key, err: errorMessage(err) },
          "run's request name is taken by a different request",
        );
        world = { ...world, requestConflict: err.differences.join("; ") };
      }
    }
    let applied: RunDecision | undefined;
    const written = await lockedMergePatch(
      this.deps.client,
      runView(run).resource,
      run,
      (latest) => {
        applied = decide(latest, {
          ...this.world(latest),
          request: world.request,
          requestConflict: world.requestConflict,
        });
        const changes =
          applied.status &&
          changedFields(
            latest.status as Record<string, unknown> | undefined,
            applied.status as Record<string, unknown>,
          );
        return changes ? { status: changes } : undefined;
      },
      { subresource: "status" },
    );
    const outcome = applied ?? first;
    if (written && outcome.enforcement) {
      const { reason, message, why } = outcome.enforcement;
      this.deps.log.info({ key, kind: run.kind, reason, message }, "enforced the custom-task contract");
      // ControllerNotFound and ResolutionFailed explain themselves: their message is the why
      const text = why === message ? message : `${why}: ${message}`;
      this.deps.recorder.record(written, "Warning", reason, text);
      this.deps.onEnforcement?.(reason, run.kind);
    }
    if (!written && !outcome.status) this.forgetIfDone(run);
    return outcome.requeueAfterMs !== undefined ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
  }

  private world(run: AnyRun): RunWorld {
    const now = this.now();
    const remote = remoteRequest(run);
    const request =
      remote.type === "request"
        ? this.deps.requests.getByKey(`${remote.input.namespace}/${remote.name}`)
        : undefined;
    return { now, config: this.deps.config(), request, cancelSeenAt: this.cancelSeenAt(run, now) };
  }

  private cancelSeenAt(run: AnyRun, now: number): number | undefined {
    const uid = run.metadata.uid ?? "";
    if (!runView(run).cancelRequested) {
      this.cancelSeen.delete(uid);
      return undefined;
    }
    const fromServer = cancelRequestedAt(run);
    if (fromServer !== undefined) return fromServer;
    const seen = this.cancelSeen.get(uid);
    if (seen !== undefined) return seen;
    this.cancelSeen.set(uid, now);
    return now;
  }

  private forgetIfDone(run: AnyRun): void {
    if (run.status?.completionTime) this.cancelSeen.delete(run.metadata.uid ?? "");
  }

  /** A deleted run needs nothing more: its request goes with it (ownerReference). */
  forget(uid: string): void {
    this.cancelSeen.delete(uid);
  }
}
