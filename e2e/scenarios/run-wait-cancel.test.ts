// A running Wait cancelled as a PipelineRun cancels it (spec.status
// RunCancelled and Tekton's statusMessage): the Wait controller ends it at
// once with Tekton's cancelled reason and the statusMessage as its message.
// The run-controller's grace is 20s, so it cannot have been the one.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  cancelRun,
  createRun,
  enforcementCount,
  FLAVOURS,
  runEvents,
  runObject,
  runStarted,
  runSucceeded,
  WAIT_REF,
  waitForRun,
} from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("run-wait-cancel", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "5s", "enforcement-grace": "20s" }),
  start: ["run-controller", "wait-task"],
});

const CANCELLED = { CustomRun: "CustomRunCancelled", Run: "RunCancelled" } as const;

for (const flavour of FLAVOURS) {
  test(`${flavour}: a Wait of 30s cancelled by its PipelineRun ends ${CANCELLED[flavour]} at once, by the Wait controller`, async () => {
    const scn = scenario();
    const name = `wait-30s-${flavour.toLowerCase()}`;
    await createRun(
      scn.admin,
      runObject(flavour, scn.namespace, {
        name,
        ref: WAIT_REF,
        params: [{ name: "duration", value: "30s" }],
      }),
    );
    // waiting for its duration (started and Running, in one write)
    const running = (r: AnyRun) => runStarted(r) && runSucceeded(r)?.reason === "Running";
    const started = await waitForRun(scn, flavour, name, running, 10_000);
    assert.equal(runSucceeded(started)?.message, "Waiting for duration to elapse");

    const statusMessage = `${flavour} cancelled as the PipelineRun it belongs to has been cancelled.`;
    const cancelledAt = Date.now();
    await cancelRun(scn.admin, flavour, scn.namespace, name, statusMessage);
    const run = await waitForRun(scn, flavour, name, undefined, 10_000);
    const tookMs = Date.now() - cancelledAt;

    const c = runSucceeded(run)!;
    assert.equal(c.status, "False");
    assert.equal(c.reason, CANCELLED[flavour]);
    assert.equal(c.message, statusMessage);
    assert.ok(run.status?.completionTime, "completionTime set");
    assert.equal(run.status?.completionTime, c.lastTransitionTime);
    assert.ok(tookMs < 3000, `ended ${tookMs} ms after the cancel`);
    assert.equal(run.status?.results, undefined, "a cancelled Wait has no results");

    // the Wait controller said so; the run-controller never stepped in
    // Events are recorded after the write, asynchronously
    const events = await waitUntil(
      "the Wait controller's Event",
      async () => {
        const list = await runEvents(scn.admin, flavour, scn.namespace, name);
        return list.some((e) => e.reason === CANCELLED[flavour]) && list;
      },
      { timeoutMs: 5000 },
    );
    assert.deepEqual(
      events.filter((e) => e.reason === CANCELLED[flavour]),
      [{ type: "Normal", reason: CANCELLED[flavour], message: statusMessage, component: "wait-task" }],
    );
    assert.deepEqual(
      events.filter((e) => e.component === "run-controller"),
      [],
    );
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    assert.equal(await enforcementCount(runController, CANCELLED[flavour], flavour), 0);
    assert.doesNotMatch((await runController.ops("/metrics")).body, /quarry_run_enforcements_total\{/);
  });
}
