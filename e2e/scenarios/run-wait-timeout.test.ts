// A Wait of 30s with spec.timeout 1s: the Wait controller times it out just
// past 1s after its start with Tekton's timed-out reason and TaskRun-style
// message. The run-controller's grace is 20s, so it cannot have been the one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRun,
  enforcementCount,
  FLAVOURS,
  runEvents,
  runObject,
  runSucceeded,
  WAIT_REF,
  waitForRun,
} from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("run-wait-timeout", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "5s", "enforcement-grace": "20s" }),
  start: ["run-controller", "wait-task"],
});

const TIMED_OUT = { CustomRun: "CustomRunTimedOut", Run: "RunTimedOut" } as const;

for (const flavour of FLAVOURS) {
  test(`${flavour}: a Wait of 30s with timeout 1s ends ${TIMED_OUT[flavour]} just past 1s, by the Wait controller`, async () => {
    const scn = scenario();
    const name = `wait-30s-1s-${flavour.toLowerCase()}`;
    const createdAt = Date.now();
    await createRun(
      scn.admin,
      runObject(flavour, scn.namespace, {
        name,
        ref: WAIT_REF,
        params: [{ name: "duration", value: "30s" }],
        timeout: "1s",
      }),
    );
    const run = await waitForRun(scn, flavour, name, undefined, 10_000);
    const tookMs = Date.now() - createdAt;

    const c = runSucceeded(run)!;
    const message = `${flavour} "${name}" failed to finish within "1s"`;
    assert.equal(c.status, "False");
    assert.equal(c.reason, TIMED_OUT[flavour]);
    assert.equal(c.message, message);
    assert.equal(run.status?.completionTime, c.lastTransitionTime);
    // Tekton: timed out once strictly more than the timeout has passed since startTime, counted
    // from the end of startTime's whole second (never early, up to 1s late)
    const ranMs = Date.parse(run.status!.completionTime!) - Date.parse(run.status!.startTime!);
    assert.ok(ranMs >= 2000 && ranMs <= 3000, `completionTime ${ranMs} ms after startTime`);
    assert.ok(tookMs < 5000, `ended ${tookMs} ms after the create call`);
    assert.equal(run.status?.retriesStatus, undefined, "no retries asked for");

    // Events are recorded after the write, asynchronously
    const events = await waitUntil(
      "the Wait controller's Event",
      async () => {
        const list = await runEvents(scn.admin, flavour, scn.namespace, name);
        return list.some((e) => e.reason === TIMED_OUT[flavour]) && list;
      },
      { timeoutMs: 5000 },
    );
    assert.deepEqual(
      events.filter((e) => e.reason === TIMED_OUT[flavour]),
      [{ type: "Warning", reason: TIMED_OUT[flavour], message, component: "wait-task" }],
    );
    assert.deepEqual(
      events.filter((e) => e.component === "run-controller"),
      [],
    );
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    assert.equal(await enforcementCount(runController, TIMED_OUT[flavour], flavour), 0);
    assert.doesNotMatch((await runController.ops("/metrics")).body, /quarry_run_enforcements_total\{/);
  });
}
