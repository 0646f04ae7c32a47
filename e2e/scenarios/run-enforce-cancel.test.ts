// A cancel the owning controller ignores: a stub "controller" (this test)
// initialises a run of kind Stubborn and never reacts to its cancel; once
// enforcement-grace (2s) has passed since the cancel, and not before, the
// run-controller marks it cancelled with Tekton's reason and the
// statusMessage, says why in a Warning Event and counts it. A stub that ends
// its run itself within the grace period is left exactly as it wrote it.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Condition, RunFlavour } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  cancelRun,
  createRun,
  enforcementCount,
  FLAVOURS,
  getRun,
  metaTime,
  recordRunStates,
  runEvents,
  runObject,
  runSucceeded,
  waitForRun,
  writeRunStatus,
} from "@quarry/harness/runs";
import { processName, type Scenario, setConfig, useScenario } from "@quarry/harness/scenario";

const GRACE_MS = 2000;
const STUBBORN = { apiVersion: "example.dev/v1", kind: "Stubborn" } as const;
const CANCELLED = { CustomRun: "CustomRunCancelled", Run: "RunCancelled" } as const;

const scenario = useScenario("run-enf-cancel", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "5s", "enforcement-grace": "2s" }),
  start: ["run-controller"],
});

/** Creates a Stubborn run and initialises it as its controller would: started, Succeeded Unknown. */
async function stubRun(scn: Scenario, flavour: RunFlavour, name: string) {
  await createRun(scn.admin, runObject(flavour, scn.namespace, { name, ref: STUBBORN }));
  const now = metaTime(Date.now());
  await writeRunStatus(scn.admin, flavour, scn.namespace, name, {
    startTime: now,
    conditions: [{ type: "Succeeded", status: "Unknown", reason: "Running", lastTransitionTime: now }],
  });
}

for (const flavour of FLAVOURS) {
  const statusMessage = `${flavour} cancelled as the PipelineRun it belongs to has been cancelled.`;

  test(`${flavour}: a cancel its controller ignores is marked ${CANCELLED[flavour]} once the grace period is over, not before`, async () => {
    const scn = scenario();
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    const name = `ignores-cancel-${flavour.toLowerCase()}`;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      await stubRun(scn, flavour, name);
      const cancelStart = Date.now();
      await cancelRun(scn.admin, flavour, scn.namespace, name, statusMessage);
      const cancelEnd = Date.now();
      const run = await waitForRun(scn, flavour, name, undefined, 10_000);

      const c = runSucceeded(run)!;
      assert.equal(c.status, "False");
      assert.equal(c.reason, CANCELLED[flavour]);
      assert.equal(c.message, statusMessage);
      assert.equal(run.status?.completionTime, c.lastTransitionTime);

      await waitUntil(
        "the final state through the watch",
        () => rec.states.get(name)?.at(-1)?.status === "False",
      );
      const seen = rec.states.get(name)!;
      assert.deepEqual(
        seen.map((s) => `${s.status}/${s.reason}`),
        ["none/", "Unknown/Running", `False/${CANCELLED[flavour]}`],
      );
      // never before the grace period has passed since the cancel; then at once (a requeue for the
      // remaining time; the cancel's time is known to the second, so up to 1s more)
      const markedAt = seen.at(-1)!.at;
      assert.ok(markedAt - cancelStart >= GRACE_MS, `marked ${markedAt - cancelStart} ms after the cancel`);
      assert.ok(markedAt - cancelEnd < GRACE_MS + 2000, `marked ${markedAt - cancelEnd} ms after the cancel`);

      const events = await waitUntil("the enforcement Event", async () => {
        const list = await runEvents(scn.admin, flavour, scn.namespace, name);
        return list.length > 0 && list;
      });
      assert.deepEqual(events, [
        {
          type: "Warning",
          reason: CANCELLED[flavour],
          message: `cancel requested and the controller of Stubborn (apiVersion example.dev/v1) did not stop the run within 2s: ${statusMessage}`,
          component: processName(scn, "run-controller"),
        },
      ]);
      assert.equal(await enforcementCount(runController, CANCELLED[flavour], flavour), 1);
    } finally {
      rec.stop();
    }
  });

  test(`${flavour}: a run its controller ends itself within the grace period is left as it wrote it`, async () => {
    const scn = scenario();
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    const name = `honours-cancel-${flavour.toLowerCase()}`;
    await stubRun(scn, flavour, name);
    await cancelRun(scn.admin, flavour, scn.namespace, name, statusMessage);
    await new Promise((r) => setTimeout(r, 500));
    const now = metaTime(Date.now());
    const own: Condition = {
      type: "Succeeded",
      status: "False",
      reason: "StubStopped",
      message: "the Stubborn controller stopped it its own way",
      lastTransitionTime: now,
    };
    const written = await writeRunStatus(scn.admin, flavour, scn.namespace, name, {
      conditions: [own],
      completionTime: now,
    });

    // well past when the run-controller would have marked it
    await new Promise((r) => setTimeout(r, GRACE_MS + 1500));
    const run = await getRun(scn.admin, flavour, scn.namespace, name);
    assert.deepEqual(run.status, written.status);
    assert.equal(run.metadata.resourceVersion, written.metadata.resourceVersion, "never written again");
    assert.deepEqual(runSucceeded(run), own);
    assert.deepEqual(await runEvents(scn.admin, flavour, scn.namespace, name), []);
    // only the other test's run was enforced
    assert.equal(await enforcementCount(runController, CANCELLED[flavour], flavour), 1);
  });
}
