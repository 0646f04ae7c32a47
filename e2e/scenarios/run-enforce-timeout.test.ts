// A timeout the owning controller ignores: a stub "controller" (this test)
// starts a run of kind Stubborn with spec.timeout 1s and never ends it; the
// run-controller marks it timed out (Tekton's reason and TaskRun-style
// message) no earlier than startTime (the end of its whole second) + timeout +
// enforcement-grace (2s), with
// a Warning Event and the metric. A run whose stub keeps it fresh and ends it
// within its timeout is never touched.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunFlavour } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import {
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
const TIMED_OUT = { CustomRun: "CustomRunTimedOut", Run: "RunTimedOut" } as const;

const scenario = useScenario("run-enf-timeout", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "5s", "enforcement-grace": "2s" }),
  start: ["run-controller"],
});

const running = (message: string) => ({
  type: "Succeeded",
  status: "Unknown",
  reason: "Running",
  message,
  lastTransitionTime: metaTime(Date.now()),
});

/** Creates a Stubborn run with this timeout and starts it as its controller would; its startTime. */
async function stubRun(scn: Scenario, flavour: RunFlavour, name: string, timeout: string): Promise<string> {
  await createRun(scn.admin, runObject(flavour, scn.namespace, { name, ref: STUBBORN, timeout }));
  const startTime = metaTime(Date.now());
  await writeRunStatus(scn.admin, flavour, scn.namespace, name, {
    startTime,
    conditions: [running("stubbing")],
  });
  return startTime;
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: a timeout its controller ignores is marked ${TIMED_OUT[flavour]} once timeout and grace are over, not before`, async () => {
    const scn = scenario();
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    const name = `ignores-timeout-${flavour.toLowerCase()}`;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      const startTime = await stubRun(scn, flavour, name, "1s");
      const run = await waitForRun(scn, flavour, name, undefined, 10_000);

      const c = runSucceeded(run)!;
      const message = `${flavour} "${name}" failed to finish within "1s"`;
      assert.equal(c.status, "False");
      assert.equal(c.reason, TIMED_OUT[flavour]);
      assert.equal(c.message, message);
      assert.equal(run.status?.completionTime, c.lastTransitionTime);
      assert.equal(run.status?.startTime, startTime, "startTime kept");

      await waitUntil(
        "the final state through the watch",
        () => rec.states.get(name)?.at(-1)?.status === "False",
      );
      const seen = rec.states.get(name)!;
      assert.deepEqual(
        seen.map((s) => `${s.status}/${s.reason}`),
        ["none/", "Unknown/Running", `False/${TIMED_OUT[flavour]}`],
      );
      // due strictly after startTime + timeout, then the grace: never earlier, then at once. The
      // stub's startTime is whole seconds, which the enforcer (as the SDK) counts from the end of
      // its second, so a working controller always gets its own timeout first
      const due = Date.parse(startTime) + 1000 + 1000 + GRACE_MS;
      const markedAt = seen.at(-1)!.at;
      assert.ok(markedAt > due, `marked ${markedAt - due} ms after startTime + timeout + grace`);
      assert.ok(markedAt - due < 1000, `marked ${markedAt - due} ms after startTime + timeout + grace`);
      assert.ok(Date.parse(c.lastTransitionTime!) >= due, "lastTransitionTime before the deadline");

      const events = await waitUntil("the enforcement Event", async () => {
        const list = await runEvents(scn.admin, flavour, scn.namespace, name);
        return list.length > 0 && list;
      });
      assert.deepEqual(events, [
        {
          type: "Warning",
          reason: TIMED_OUT[flavour],
          message: `timed out and the controller of Stubborn (apiVersion example.dev/v1) did not end the run within 2s: ${message}`,
          component: processName(scn, "run-controller"),
        },
      ]);
      assert.equal(await enforcementCount(runController, TIMED_OUT[flavour], flavour), 1);
    } finally {
      rec.stop();
    }
  });

  test(`${flavour}: a run its controller keeps fresh and ends within its timeout is never touched`, async () => {
    const scn = scenario();
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    const name = `fresh-${flavour.toLowerCase()}`;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      const startedAt = Date.now();
      await stubRun(scn, flavour, name, "6s");
      // heartbeats for longer than the grace period and the other run's whole timeout + grace
      for (let tick = 1; Date.now() - startedAt < 4000; tick++) {
        await new Promise((r) => setTimeout(r, 500));
        await writeRunStatus(scn.admin, flavour, scn.namespace, name, {
          conditions: [running(`tick ${tick}`)],
        });
      }
      const now = metaTime(Date.now());
      const done = {
        type: "Succeeded",
        status: "True",
        reason: "Succeeded",
        message: "stubbed",
        lastTransitionTime: now,
      };
      const written = await writeRunStatus(scn.admin, flavour, scn.namespace, name, {
        conditions: [done],
        completionTime: now,
        results: [{ name: "stub", value: "ok" }],
      });
      await new Promise((r) => setTimeout(r, 500));

      const run = await getRun(scn.admin, flavour, scn.namespace, name);
      assert.equal(
        run.metadata.resourceVersion,
        written.metadata.resourceVersion,
        "never written after the stub",
      );
      assert.deepEqual(run.status, written.status);
      const seen = rec.states.get(name)!;
      assert.deepEqual(seen[0]?.status, "none");
      assert.ok(seen.length >= 8, `${seen.length} states`);
      assert.ok(
        seen.slice(1, -1).every((s) => s.status === "Unknown" && s.reason === "Running"),
        "only the stub's own states",
      );
      assert.equal(seen.at(-1)?.reason, "Succeeded");
      assert.deepEqual(await runEvents(scn.admin, flavour, scn.namespace, name), []);
      assert.equal(
        await enforcementCount(runController, TIMED_OUT[flavour], flavour),
        1,
        "only the other run",
      );
    } finally {
      rec.stop();
    }
  });
}
