// A run cancelled before any controller initialised it ends cancelled, not
// ControllerNotFound: the user's cancel wins. The grace period here is far
// longer than the initial-update timeout, so only the initial-update deadline
// can end the run, and it ends it with Tekton's cancelled reason.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  cancelRun,
  createRun,
  enforcementCount,
  FLAVOURS,
  recordRunStates,
  runEvents,
  runObject,
  runSucceeded,
  waitForRun,
} from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const NOBODY = { apiVersion: "example.dev/v1", kind: "Nobody" } as const;
const CANCELLED = { CustomRun: "CustomRunCancelled", Run: "RunCancelled" } as const;

const scenario = useScenario("run-cancel-early", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "2s", "enforcement-grace": "5m" }),
  start: ["run-controller"],
});

for (const flavour of FLAVOURS) {
  test(`${flavour}: cancelled before any controller picked it up, it ends ${CANCELLED[flavour]}, never ControllerNotFound`, async () => {
    const scn = scenario();
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    const name = `early-cancel-${flavour.toLowerCase()}`;
    const rec = recordRunStates(scn.admin, flavour, scn.namespace);
    try {
      await rec.ready;
      await createRun(scn.admin, runObject(flavour, scn.namespace, { name, ref: NOBODY }));
      const statusMessage = `${flavour} cancelled as the PipelineRun it belongs to has been cancelled.`;
      await cancelRun(scn.admin, flavour, scn.namespace, name, statusMessage);

      const run = await waitForRun(scn, flavour, name, undefined, 15_000);
      const c = runSucceeded(run)!;
      assert.equal(c.status, "False");
      assert.equal(c.reason, CANCELLED[flavour]);
      assert.ok(run.status?.completionTime, "completionTime set");
      const seen = await waitUntil(`${name}'s transition on the watch`, () => {
        const states = rec.states.get(name) ?? [];
        return states.some((x) => x.status === "False") ? states : undefined;
      });
      assert.deepEqual(
        seen.map((s) => `${s.status}/${s.reason}`),
        ["none/", `False/${CANCELLED[flavour]}`],
        "cancelled directly, never ControllerNotFound",
      );
      const events = await waitUntil(`${name}'s Event`, async () => {
        const all = await runEvents(scn.admin, flavour, scn.namespace, name);
        return all.some((e) => e.reason === CANCELLED[flavour]) ? all : undefined;
      });
      assert.equal(events.filter((e) => e.reason === "ControllerNotFound").length, 0);
      assert.equal(await enforcementCount(runController, "ControllerNotFound", flavour), 0);
      assert.equal(await enforcementCount(runController, CANCELLED[flavour], flavour), 1);
    } finally {
      rec.stop();
    }
  });
}
