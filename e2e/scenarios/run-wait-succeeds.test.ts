// TEP-0002's Wait, Run and CustomRun alike: the Wait controller starts the
// run, it succeeds with DurationElapsed once the duration has passed, and the
// run-controller (running alongside, enforcing) never writes its conditions.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createRun, FLAVOURS, runObject, runSucceeded, WAIT_REF, waitForRun } from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("run-wait", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "3s", "enforcement-grace": "1s" }),
  start: ["run-controller", "wait-task"],
});

for (const flavour of FLAVOURS) {
  test(`${flavour}: Wait succeeds after its duration (DurationElapsed), untouched by enforcement`, async () => {
    const scn = scenario();
    const name = `wait-1s-${flavour.toLowerCase()}`;
    const created = await createRun(
      scn.admin,
      runObject(flavour, scn.namespace, { name, ref: WAIT_REF, params: [{ name: "duration", value: "1s" }] }),
    );
    const run = await waitForRun(scn, flavour, name);
    const c = runSucceeded(run)!;
    assert.equal(c.status, "True", c.message);
    assert.equal(c.reason, "DurationElapsed");
    assert.equal(c.message, "The wait duration has elapsed");
    assert.deepEqual(run.status?.results, [{ name: "waited", value: "1s" }]);
    // never early: startTime is whole seconds, so the SDK counts from the end of its second and
    // the 1s wait ends at least 2s after the stamp (up to 1s later than the wait itself)
    const took = Date.parse(run.status!.completionTime!) - Date.parse(run.status!.startTime!);
    assert.ok(took >= 2000 && took < 5000, `took ${took} ms`);
    assert.ok(Date.parse(run.status!.startTime!) >= Date.parse(created.metadata.creationTimestamp!));
    // the run-controller never stepped in on a well-behaved controller's run
    const metrics = await scn.services.find((s) => s.name === "run-controller")!.ops("/metrics");
    assert.doesNotMatch(metrics.body, /quarry_run_enforcements_total\{/);
  });
}
