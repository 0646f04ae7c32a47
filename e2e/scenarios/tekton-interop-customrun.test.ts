// Tekton Pipelines' own controller (v1.15.1) running Quarry's Wait custom task: a PipelineRun whose
// pipeline tasks have `taskRef: {apiVersion: wait.testing.tekton.dev/v1beta1, kind: Wait}` makes
// Tekton create a CustomRun per task, Quarry's wait-task (examples/wait-task, CustomRun flavour
// only, as on a Tekton cluster) completes each, and Tekton reads them: the PipelineRun succeeds,
// its childReferences name the CustomRuns, and the first Wait's `waited` result flows into the
// second one's param and out as the pipeline's result.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runSucceeded, WAIT_REF } from "@quarry/harness/runs";
import { createRun, pipelineRuns, succeededOf, useTektonCluster } from "@quarry/harness/tekton";
import {
  customRunFor,
  pipelineRunDone,
  WAIT_TASK_SERVICES,
  waitTask,
} from "@quarry/harness/tekton-customrun";

const cluster = useTektonCluster("tekton-customrun", { gitFiles: {}, services: WAIT_TASK_SERVICES });

test("a PipelineRun of two Wait custom tasks: Tekton creates the CustomRuns, Quarry completes them, results flow", async () => {
  const t = cluster();
  const pr = await createRun(t, pipelineRuns, "waits", {
    pipelineSpec: {
      tasks: [
        waitTask("first", "1s"),
        waitTask("second", "$(tasks.first.results.waited)", { runAfter: ["first"] }),
      ],
      results: [{ name: "waited", type: "string", value: "$(tasks.second.results.waited)" }],
    },
  });
  const done = await pipelineRunDone(t, "waits");
  const c = succeededOf(done)!;
  assert.equal(c.status, "True", `${c.reason}: ${c.message}`);
  assert.equal(c.reason, "Succeeded");
  assert.equal(c.message, "Tasks Completed: 2 (Failed: 0, Cancelled 0), Skipped: 0");
  assert.deepEqual(done.status?.results, [{ name: "waited", value: "1s" }]);

  const refs = done.status?.childReferences ?? [];
  assert.deepEqual(refs.map((r) => [r.pipelineTaskName, r.kind, r.apiVersion]).sort(), [
    ["first", "CustomRun", "tekton.dev/v1beta1"],
    ["second", "CustomRun", "tekton.dev/v1beta1"],
  ]);
  for (const task of ["first", "second"]) {
    const run = await customRunFor(t, "waits", task);
    assert.equal(refs.find((r) => r.pipelineTaskName === task)?.name, run.metadata.name);
    // Tekton's creation: owned by the PipelineRun, labelled with its task, customRef as written
    assert.equal(run.metadata.ownerReferences?.[0]?.uid, pr.metadata.uid);
    assert.equal(run.metadata.labels?.["tekton.dev/pipelineRun"], "waits");
    assert.equal(run.metadata.labels?.["tekton.dev/pipelineTask"], task);
    assert.deepEqual(run.spec.customRef, WAIT_REF);
    // the second's param is the first's result, substituted by Tekton
    assert.deepEqual(run.spec.params, [{ name: "duration", value: "1s" }]);
    // Quarry's completion
    const rc = runSucceeded(run)!;
    assert.equal(rc.status, "True", rc.message);
    assert.equal(rc.reason, "DurationElapsed");
    assert.deepEqual(run.status?.results, [{ name: "waited", value: "1s" }]);
    assert.ok(run.status?.startTime && run.status.completionTime, "startTime and completionTime");
  }
});
