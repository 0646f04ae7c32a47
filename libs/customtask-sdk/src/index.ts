// @quarry/customtask-sdk: the custom-task author's runtime. Declare the
// group/kind a task serves and its params, write one `reconcile` that says
// what a run is now; the SDK starts, cancels, times out and retries runs with
// Tekton's reasons for Run and CustomRun alike. The SDK's own parts (status
// transitions, the reconciler) are in @quarry/customtask-sdk/internal, for the
// run-controller, which shares them.

export { decideTask, type TaskDecision, type TaskWorld } from "./decide.ts";
export type { RunFlavour } from "./flavours.ts";
export { type RunCustomTaskOptions, runCustomTask } from "./run.ts";
export type { CustomTask, DeclaredParam, RefOutcome, Step, TaskContext } from "./task.ts";
