// TEP-0002's initial-update timeout: a run whose ref or embedded spec names a
// kind no controller serves fails with ControllerNotFound once
// initial-update-timeout has passed since its creation, not before and not
// much after (the run-controller requeues for exactly the remaining time), with
// a Warning Event and the enforcement metric.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRun,
  enforcementCount,
  FLAVOURS,
  type RunInput,
  recordRunStates,
  runEvents,
  runObject,
  runSucceeded,
  waitForRun,
} from "@quarry/harness/runs";
import { processName, setConfig, useScenario } from "@quarry/harness/scenario";

const TIMEOUT_MS = 2000;
const NOBODY = { apiVersion: "example.dev/v1", kind: "Nobody" } as const;

const scenario = useScenario("run-nf", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "2s", "enforcement-grace": "1s" }),
  start: ["run-controller", "wait-task"],
});

for (const flavour of FLAVOURS) {
  test(`${flavour}: a ref and an embedded spec of a kind nobody serves fail with ControllerNotFound after initial-update-timeout`, async () => {
    const scn = scenario();
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      const inputs: RunInput[] = [
        { name: `nobody-ref-${flavour.toLowerCase()}`, ref: NOBODY },
        {
          name: `nobody-spec-${flavour.toLowerCase()}`,
          embedded: { ...NOBODY, spec: { anything: "goes" } },
        },
      ];
      await Promise.all(
        inputs.map(async ({ name, ...input }) => {
          const createdAt = Date.now();
          const created = await createRun(scn.admin, runObject(flavour, scn.namespace, { name, ...input }));
          const run = await waitForRun(scn, flavour, name, undefined, 10_000);
          const c = runSucceeded(run)!;
          assert.equal(c.status, "False");
          assert.equal(c.reason, "ControllerNotFound");
          const message = `no controller initialised the status of this ${flavour} within 2s: nothing handles Nobody (apiVersion example.dev/v1)`;
          assert.equal(c.message, message);
          assert.ok(run.status?.completionTime, "completionTime set");

          // never before the timeout, by the creationTimestamp the controller counts from and by this
          // machine's clock from the create call (the stamp is truncated to the second: the creation
          // happened within the second after it)
          const creation = Date.parse(created.metadata.creationTimestamp!);
          const byFields = Date.parse(c.lastTransitionTime!) - creation;
          assert.ok(
            byFields >= TIMEOUT_MS && byFields <= TIMEOUT_MS + 2000,
            `condition ${byFields} ms after creation`,
          );
          // the watch may deliver the transition a moment after the GET above saw it
          const seen = await waitUntil(`${name}'s transition on the watch`, () => {
            const states = rec.states.get(name) ?? [];
            return states.some((x) => x.status === "False") ? states : undefined;
          });
          assert.deepEqual(
            seen.map((s) => `${s.status}/${s.reason}`),
            ["none/", "False/ControllerNotFound"],
            "nothing in between",
          );
          const failedAt = seen[seen.length - 1]!.at;
          assert.ok(
            failedAt - createdAt >= TIMEOUT_MS,
            `failed ${failedAt - createdAt} ms after the create call`,
          );
          // requeued for exactly the remaining time (the end of the creation's second + the timeout),
          // not found by some later poll
          const late = failedAt - (creation + 1000 + TIMEOUT_MS);
          assert.ok(late >= 0 && late < 1000, `failed ${late} ms after the deadline`);

          // Events are recorded after the status write: wait for this one to be there
          const events = await waitUntil(`${name}'s Event`, async () => {
            const all = await runEvents(scn.admin, flavour, scn.namespace, name);
            return all.some((e) => e.reason === "ControllerNotFound") ? all : undefined;
          });
          assert.deepEqual(
            events.filter((e) => e.reason === "ControllerNotFound"),
            [
              {
                type: "Warning",
                reason: "ControllerNotFound",
                message,
                component: processName(scn, "run-controller"),
              },
            ],
          );
        }),
      );
      assert.equal(await enforcementCount(runController, "ControllerNotFound", flavour), 2);
      // the Wait controller never took them up
      const wait = scn.services.find((s) => s.name === "wait-task")!;
      assert.doesNotMatch(wait.logs(), /nobody-/);
    } finally {
      rec.stop();
    }
  });
}
