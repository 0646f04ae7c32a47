// A custom task nobody serves, under Tekton's own controller (v1.15.1) with Quarry's run-controller
// enforcing TEP-0002. Tekton alone would leave such a CustomRun Unknown until the PipelineRun's
// timeout (an hour by default). The run-controller fails it ControllerNotFound after
// initial-update-timeout, and Tekton reads that as a failed task: the PipelineRun fails. Cancelled
// gracefully, a CustomRun whose controller does not honour the cancel is ended CustomRunCancelled
// by the run-controller after enforcement-grace, and Tekton counts it cancelled, not failed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runSucceeded } from "@quarry/harness/runs";
import { setConfig } from "@quarry/harness/scenario";
import { createRun, pipelineRuns, succeededOf, useTektonCluster } from "@quarry/harness/tekton";
import { customRunDone, customRunFor, pipelineRunDone } from "@quarry/harness/tekton-customrun";

const NOBODY = { apiVersion: "nobody.example.dev/v1", kind: "Nobody" };
/** Also served by nobody; its runs get a long initial-update-timeout, so only a cancel ends them. */
const LATE = { apiVersion: "late.example.dev/v1", kind: "Late" };

const cluster = useTektonCluster("tekton-customrun-unhandled", {
  gitFiles: {},
  setup: ({ scn }) =>
    setConfig(scn, "run-controller-config", {
      "initial-update-timeout": "2s",
      "enforcement-grace": "1s",
      kinds: "- group: late.example.dev\n  kind: Late\n  initial-update-timeout: 10m\n",
    }),
  services: { "run-controller": { QUARRY_RUN_FLAVOURS: "CustomRun" } },
});

test("a CustomRun nobody initialises: the run-controller fails it ControllerNotFound, the PipelineRun fails", async () => {
  const t = cluster();
  await createRun(t, pipelineRuns, "nobody", { pipelineSpec: { tasks: [{ name: "x", taskRef: NOBODY }] } });
  const done = await pipelineRunDone(t, "nobody");
  const c = succeededOf(done)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "Failed", c.message);
  assert.equal(c.message, "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0");
  const run = await customRunFor(t, "nobody", "x", customRunDone);
  const rc = runSucceeded(run)!;
  assert.equal(rc.reason, "ControllerNotFound", rc.message);
  assert.match(rc.message ?? "", /Nobody/);
});

test("CancelledRunFinally of a CustomRun nobody stops: the run-controller ends it CustomRunCancelled, the PipelineRun ends Cancelled", async () => {
  const t = cluster();
  await createRun(t, pipelineRuns, "late", { pipelineSpec: { tasks: [{ name: "x", taskRef: LATE }] } });
  await customRunFor(t, "late", "x");
  await t.scn.admin.mergePatch(pipelineRuns, t.scn.namespace, "late", {
    spec: { status: "CancelledRunFinally" },
  });
  const done = await pipelineRunDone(t, "late");
  const c = succeededOf(done)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "Cancelled", c.message);
  const run = await customRunFor(t, "late", "x", customRunDone);
  const rc = runSucceeded(run)!;
  assert.equal(rc.reason, "CustomRunCancelled", rc.message);
  assert.equal(rc.message, "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.");
});
