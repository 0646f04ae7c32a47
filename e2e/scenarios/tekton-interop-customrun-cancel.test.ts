// Cancelling a PipelineRun of Quarry's Wait custom task under Tekton's own controller (v1.15.1).
// Tekton cancels each CustomRun it created by patching spec.status RunCancelled and its message;
// Quarry's wait-task ends the waiting one CustomRunCancelled with that message and leaves a
// finished one alone. Hard cancel (`spec.status: Cancelled`): Tekton ends the PipelineRun
// Cancelled itself. Graceful cancel (`CancelledRunFinally`): Tekton waits for the CustomRun and
// counts it as cancelled only by Quarry's reason (any other would make the PipelineRun Failed),
// runs the finally task, and ends the PipelineRun Cancelled.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runSucceeded } from "@quarry/harness/runs";
import {
  createRun,
  pipelineRuns,
  succeededOf,
  type TektonCluster,
  useTektonCluster,
} from "@quarry/harness/tekton";
import {
  customRunDone,
  customRunFor,
  customRunWaiting,
  pipelineRunDone,
  WAIT_TASK_SERVICES,
  waitTask,
} from "@quarry/harness/tekton-customrun";

const cluster = useTektonCluster("tekton-customrun-cancel", { gitFiles: {}, services: WAIT_TASK_SERVICES });

const BY_PIPELINE = "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.";

function cancel(t: TektonCluster, name: string, status: "Cancelled" | "CancelledRunFinally") {
  return t.scn.admin.mergePatch(pipelineRuns, t.scn.namespace, name, { spec: { status } });
}

async function assertCancelledByQuarry(t: TektonCluster, pipelineRun: string, task: string) {
  const run = await customRunFor(t, pipelineRun, task, customRunDone);
  assert.equal(run.spec.status, "RunCancelled", "Tekton's cancel");
  assert.equal(run.spec.statusMessage, BY_PIPELINE);
  const c = runSucceeded(run)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "CustomRunCancelled", c.message);
  assert.equal(c.message, BY_PIPELINE);
  assert.ok(run.status?.completionTime, "completionTime");
  assert.equal(run.status?.results, undefined, "no result from a cancelled wait");
}

test("spec.status Cancelled: Tekton cancels the CustomRuns, Quarry ends the waiting one CustomRunCancelled", async () => {
  const t = cluster();
  await createRun(t, pipelineRuns, "hard", {
    pipelineSpec: { tasks: [waitTask("quick", "1s"), waitTask("slow", "5m")] },
  });
  await customRunFor(t, "hard", "quick", customRunDone);
  await customRunFor(t, "hard", "slow", customRunWaiting);
  await cancel(t, "hard", "Cancelled");
  const done = await pipelineRunDone(t, "hard");
  const c = succeededOf(done)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "Cancelled", c.message);
  assert.equal(c.message, 'PipelineRun "hard" was cancelled');
  await assertCancelledByQuarry(t, "hard", "slow");
  // Tekton patches every child, finished or not; Quarry keeps a finished run's outcome
  const quick = await customRunFor(t, "hard", "quick");
  assert.equal(quick.spec.status, "RunCancelled");
  assert.equal(runSucceeded(quick)?.reason, "DurationElapsed");
  assert.deepEqual(quick.status?.results, [{ name: "waited", value: "1s" }]);
});

test("spec.status CancelledRunFinally: Tekton reads Quarry's CustomRunCancelled, runs finally, ends Cancelled", async () => {
  const t = cluster();
  await createRun(t, pipelineRuns, "graceful", {
    pipelineSpec: { tasks: [waitTask("slow", "5m")], finally: [waitTask("cleanup", "1s")] },
  });
  await customRunFor(t, "graceful", "slow", customRunWaiting);
  await cancel(t, "graceful", "CancelledRunFinally");
  const done = await pipelineRunDone(t, "graceful");
  const c = succeededOf(done)!;
  assert.equal(c.status, "False");
  // a reason other than CustomRunCancelled would count as a failed task: reason Failed
  assert.equal(c.reason, "Cancelled", c.message);
  await assertCancelledByQuarry(t, "graceful", "slow");
  const cleanup = await customRunFor(t, "graceful", "cleanup");
  assert.equal(runSucceeded(cleanup)?.reason, "DurationElapsed", "the finally task ran");
});
