// @quarry/customtask-sdk: the custom-task author's runtime. Declare the
// group/kind a task serves and its params, write one `reconcile` that says
// what a run is now; the SDK starts, cancels, times out and retries runs with
// Tekton's reasons for Run and CustomRun alike.

export {
  applyStep,
  attemptStart,
  cancelMessage,
  type PlanWorld,
  planRun,
  prepareParams,
  type RunPlan,
  runTimeoutMs,
  type StatusWrite,
  servesRun,
  timeoutMessage,
} from "./decide.ts";
export { type Discover, discoverWith, type RunFlavour, runFlavours } from "./flavours.ts";
export { TaskReconciler, type TaskReconcilerDeps } from "./reconciler.ts";
export { LABEL_RUN, type RemoteRequest, refOutcome, remoteRequest } from "./remote.ts";
export { parseTaskConfig, type RunCustomTaskOptions, runCustomTask, type TaskConfig } from "./run.ts";
export {
  canRetry,
  markCancelled,
  markFailed,
  markRunning,
  markStarted,
  markSucceeded,
  markTimedOut,
  RunReason,
  retriesUsed,
  retry,
  type StatusChange,
} from "./status.ts";
export type { CustomTask, DeclaredParam, RefOutcome, Step, TaskContext } from "./task.ts";
