// Performs what decide.ts decides for one run: status writes under optimistic
// locking (recomputed from the latest object on conflict), the author's
// reconcile, the task's cleanup, Events. One reconciler per flavour (Run,
// CustomRun), since both may hold a run of the same name.
import { isDeepStrictEqual } from "node:util";
import { type AnyRun, isDone, type ResolutionRequest, runView as runViewOf } from "@quarry/api";
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
import { requestResolution } from "@quarry/requester";
import { applyStep, decideTask, type StatusWrite, type TaskDecision } from "./decide.ts";
import { refOutcome, remoteRequest } from "./remote.ts";
import type { CustomTask, RefOutcome, TaskContext } from "./task.ts";

export interface TaskReconcilerDeps {
  task: CustomTask;
  client: KubeClient;
  runs: Lister<AnyRun>;
  requests: Lister<ResolutionRequest>;
  recorder: EventRecorder;
  log: Logger;
  defaultTimeoutMs: () => number;
  stopping: AbortSignal;
  now?: () => number;
}

/** A run's state can move on after a write (started → running); bound how far one reconcile goes. */
const MAX_STEPS_PER_RECONCILE = 4;

export class TaskReconciler implements Reconciler {
  private readonly deps: TaskReconcilerDeps;

  constructor(deps: TaskReconcilerDeps) {
    this.deps = deps;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async reconcile(key: string): Promise<ReconcileOutcome | undefined> {
    let run = this.deps.runs.getByKey(key);
    for (let step = 0; run && step < MAX_STEPS_PER_RECONCILE; step++) {
      const decision = decideTask(run, this.deps.task, this.world());
      if (decision.type === "skip") return undefined;
      const write =
        decision.type === "write" ? decision.write : await this.invoke(decision.run ?? run, decision);
      if (decision.type === "invoke" && decision.base) write.change = { ...decision.base, ...write.change };
      const written = await this.write(run, write);
      if (written?.moved) {
        run = written.run; // decided from an older status (a lagging cache): decide again from the latest
        continue;
      }
      if (write.stop) await this.stopTask(run, decision, write.stop);
      if (!written) return undefined; // gone, or done elsewhere meanwhile
      if (write.requeueAfterMs !== 0) {
        return write.requeueAfterMs === undefined ? undefined : { requeueAfterMs: write.requeueAfterMs };
      }
      run = written.run;
    }
    return run && !isDone(run) ? { requeueAfterMs: 0 } : undefined;
  }

  private world() {
    return { now: this.now(), defaultTimeoutMs: this.deps.defaultTimeoutMs() };
  }

  private context(run: AnyRun, decision: Extract<TaskDecision, { type: "invoke" }>): TaskContext {
    return {
      run,
      view: runViewOf(run),
      params: decision.params,
      spec: decision.spec,
      now: this.now(),
      startedAt: decision.startedAt,
      attempt: (run.status?.retriesStatus?.length ?? 0) + 1,
      timeoutMs: decision.timeoutMs,
      resolvedRef: () => this.resolvedRef(run),
      log: this.deps.log.child({ run: `${run.metadata.namespace}/${run.metadata.name}`, kind: run.kind }),
      signal: this.deps.stopping,
    };
  }

  private async invoke(
    run: AnyRun,
    decision: Extract<TaskDecision, { type: "invoke" }>,
  ): Promise<StatusWrite> {
    const step = await this.deps.task.reconcile(this.context(run, decision));
    return applyStep(run, step, this.now(), decision.remainingMs);
  }

  /** The run's remote definition: from the informer, else created (or adopted) by its deterministic name. */
  async resolvedRef(run: AnyRun): Promise<RefOutcome> {
    const remote = remoteRequest(run);
    if (remote.type === "none") return { state: "none" };
    if (remote.type === "invalid")
      return { state: "failed", request: "", reason: "InvalidResolver", message: remote.message };
    const cached = this.deps.requests.getByKey(`${remote.input.namespace}/${remote.name}`);
    return refOutcome(cached ?? (await requestResolution(this.deps.client, remote.input)));
  }

  /**
   * Writes the change if the run still needs it, and returns the run as it now is; undefined when
   * gone, done elsewhere or given a new spec. `moved` when a conflict showed a status other than the
   * one the change was decided from: that change is never written over it.
   */
  private async write(run: AnyRun, write: StatusWrite): Promise<{ run: AnyRun; moved?: true } | undefined> {
    let superseded = false;
    let moved: AnyRun | undefined;
    let unchanged: AnyRun | undefined;
    const written = await lockedMergePatch(
      this.deps.client,
      runViewOf(run).resource,
      run,
      (latest) => {
        // a state decided elsewhere (another replica, the enforcer) or a new spec (a cancel) wins:
        // the watch event it caused reconciles the run again from there
        if (isDone(latest) || latest.metadata.generation !== run.metadata.generation) {
          superseded = true;
          return undefined;
        }
        superseded = false;
        // after a conflict (latest is then a fresh copy): a status that moved on needs a new decision
        moved = latest !== run && !isDeepStrictEqual(latest.status, run.status) ? latest : undefined;
        if (moved) return undefined;
        const changes = changedFields(
          latest.status as Record<string, unknown> | undefined,
          write.change as Record<string, unknown>,
        );
        unchanged = changes ? undefined : latest;
        return changes ? { status: changes } : undefined;
      },
      { subresource: "status" },
    );
    if (superseded) return undefined;
    if (moved) return { run: moved, moved: true };
    if (written && write.event)
      this.deps.recorder.record(written, write.event.type, write.event.reason, write.event.message);
    const current = written ?? unchanged; // neither: the run is gone (404)
    return current && { run: current };
  }

  private async stopTask(run: AnyRun, decision: TaskDecision, why: "cancelled" | "timedOut"): Promise<void> {
    if (!this.deps.task.stop) return;
    const invoke: Extract<TaskDecision, { type: "invoke" }> =
      decision.type === "invoke"
        ? decision
        : {
            type: "invoke",
            params: {},
            spec: undefined,
            startedAt: this.now(),
            timeoutMs: 0,
            remainingMs: undefined,
          };
    try {
      await this.deps.task.stop(this.context(run, invoke), why);
    } catch (err) {
      this.deps.log.warn({ run: run.metadata.name, err: errorMessage(err) }, "task cleanup failed");
    }
  }
}
