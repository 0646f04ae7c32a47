// Quarry's Wait custom task under Tekton's own controller: the wait-task serving only Tekton's
// CustomRun (the run CRD a Tekton release installs), pipeline tasks that reference it, and waits
// on the CustomRuns Tekton creates.
import { type CustomRun, customRuns } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import { runDone, runSucceeded, WAIT_REF } from "./runs.ts";
import { pipelineRuns, succeededOf, type TektonCluster, type TektonRun, waitRun } from "./tekton.ts";

/** useTektonCluster's `services`: the wait-task alone (no resolution involved). */
export const WAIT_TASK_SERVICES = { "wait-task": { QUARRY_RUN_FLAVOURS: "CustomRun" } };

/** A pipeline task running Quarry's Wait for `duration` (a Go duration or a `$(…)` reference). */
export function waitTask(name: string, duration: string, extra: Record<string, unknown> = {}) {
  return { name, taskRef: { ...WAIT_REF }, params: [{ name: "duration", value: duration }], ...extra };
}

/** The PipelineRun once its Succeeded condition is True or False. */
export function pipelineRunDone(t: TektonCluster, name: string, timeoutMs = 60_000): Promise<TektonRun> {
  return waitRun(
    t,
    pipelineRuns,
    name,
    "done",
    (r) => ["True", "False"].includes(succeededOf(r)?.status ?? ""),
    timeoutMs,
  );
}

/** The CustomRun Tekton created for a pipeline task (named in the PipelineRun's childReferences). */
export async function customRunFor(
  t: TektonCluster,
  pipelineRun: string,
  pipelineTask: string,
  until: (run: CustomRun) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<CustomRun> {
  return waitUntil(
    `${pipelineRun}'s CustomRun for ${pipelineTask}`,
    async () => {
      const pr = await t.scn.admin.get<TektonRun>(pipelineRuns, t.scn.namespace, pipelineRun);
      const ref = pr.status?.childReferences?.find((c) => c.pipelineTaskName === pipelineTask);
      if (!ref) return undefined;
      const run = await t.scn.admin.get<CustomRun>(customRuns, t.scn.namespace, ref.name);
      return until(run) ? run : undefined;
    },
    { timeoutMs },
  );
}

/** Quarry's wait-task has started it and it is waiting. */
export const customRunWaiting = (run: CustomRun) =>
  run.status?.startTime !== undefined && runSucceeded(run)?.reason === "Running";

export const customRunDone = (run: CustomRun) => runDone(run);
