// @quarry/customtask-sdk/internal: the SDK's own parts, for the run-controller, which serves the
// built-in Pipe task and the runs no controller serves with the same rules (whose run, timeouts,
// cancel messages, status transitions, a run's ResolutionRequest). Task authors use the package's
// main entry; nothing here is promised to stay.
export {
  applyStep,
  attemptStart,
  cancelMessage,
  prepareParams,
  runTimeoutMs,
  type StatusWrite,
  servesRun,
  timeoutMessage,
} from "./decide.ts";
export { type Discover, discoverWith, runFlavours } from "./flavours.ts";
export { TaskReconciler, type TaskReconcilerDeps } from "./reconciler.ts";
export { LABEL_RUN, type RemoteRequest, refOutcome, remoteRequest } from "./remote.ts";
export { parseTaskConfig, type TaskConfig } from "./run.ts";
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
