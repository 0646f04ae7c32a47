// Timeouts of Quarry's Wait custom task under Tekton's own controller (v1.15.1). A pipeline task
// timeout becomes the CustomRun's spec.timeout (with its retries as spec.retries): Quarry's
// wait-task times each attempt out (CustomRunTimedOut), retries once, then fails, and Tekton
// reads it as a failed task: the PipelineRun fails with reason Failed. A PipelineRun timeout is
// Tekton's own: it cancels the CustomRun with its timeout message, Quarry ends it
// CustomRunCancelled with that message, and the PipelineRun ends PipelineRunTimeout.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runSucceeded } from "@quarry/harness/runs";
import { createRun, pipelineRuns, succeededOf, useTektonCluster } from "@quarry/harness/tekton";
import {
  customRunDone,
  customRunFor,
  pipelineRunDone,
  WAIT_TASK_SERVICES,
  waitTask,
} from "@quarry/harness/tekton-customrun";

const cluster = useTektonCluster("tekton-customrun-timeout", { gitFiles: {}, services: WAIT_TASK_SERVICES });

test("pipeline task timeout: Tekton sets spec.timeout, Quarry times out each attempt (CustomRunTimedOut), the PipelineRun fails", async () => {
  const t = cluster();
  await createRun(t, pipelineRuns, "task-timeout", {
    pipelineSpec: { tasks: [waitTask("slow", "5m", { timeout: "2s", retries: 1 })] },
  });
  const done = await pipelineRunDone(t, "task-timeout");
  const c = succeededOf(done)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "Failed", c.message);
  assert.equal(c.message, "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0");
  // the retry is the custom task's: Tekton created one CustomRun, not one per attempt
  assert.equal(done.status?.childReferences?.length, 1);
  const run = await customRunFor(t, "task-timeout", "slow", customRunDone);
  assert.equal(run.spec.timeout, "2s", "Tekton's spec.timeout");
  assert.equal(run.spec.retries, 1, "Tekton's spec.retries");
  const rc = runSucceeded(run)!;
  assert.equal(rc.reason, "CustomRunTimedOut", rc.message);
  assert.equal(rc.message, `CustomRun "${run.metadata.name}" failed to finish within "2s"`);
  assert.equal(run.status?.retriesStatus?.length, 1, "one retry");
  assert.equal(run.status?.retriesStatus?.[0]?.conditions?.[0]?.reason, "CustomRunTimedOut");
});

test("PipelineRun timeout: Tekton cancels the CustomRun as timed out, Quarry ends it CustomRunCancelled, PipelineRunTimeout", async () => {
  const t = cluster();
  await createRun(t, pipelineRuns, "pr-timeout", {
    // long enough for Tekton to create the CustomRun and Quarry to start it on a loaded machine
    timeouts: { pipeline: "5s" },
    pipelineSpec: { tasks: [waitTask("slow", "5m")] },
  });
  const done = await pipelineRunDone(t, "pr-timeout");
  const c = succeededOf(done)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "PipelineRunTimeout", c.message);
  const run = await customRunFor(t, "pr-timeout", "slow", customRunDone);
  const byTimeout = "CustomRun cancelled as the PipelineRun it belongs to has timed out.";
  assert.equal(run.spec.status, "RunCancelled");
  assert.equal(run.spec.statusMessage, byTimeout);
  const rc = runSucceeded(run)!;
  assert.equal(rc.reason, "CustomRunCancelled", rc.message);
  assert.equal(rc.message, byTimeout);
});
