// An embedded Wait (customSpec / spec.spec) declaring its params: the SDK
// checks the run's params against the declarations, substitutes them into
// the spec once ($(params.x), no recursive expansion), and fails bad params
// with a specific reason before the task's code runs.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Param } from "@quarry/api";
import { createRun, FLAVOURS, runObject, runSucceeded, waitForRun } from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("run-embedded", {
  setup: (scn) => setConfig(scn, "run-controller-config", { "initial-update-timeout": "20s" }),
  start: ["run-controller", "wait-task"],
});

const WAIT_SPEC = {
  apiVersion: "wait.testing.tekton.dev/v1beta1",
  kind: "Wait",
  spec: { params: [{ name: "d", type: "string", default: "30s" }], duration: "$(params.d)" },
};

const cases: { name: string; params: Param[]; status: string; reason: string; mentions: string }[] = [
  {
    name: "sub-1s",
    params: [{ name: "d", value: "1s" }],
    status: "True",
    reason: "DurationElapsed",
    mentions: "elapsed",
  },
  {
    name: "unknown",
    params: [{ name: "e", value: "1s" }],
    status: "False",
    reason: "UnknownParam",
    mentions: '"e"',
  },
  {
    name: "array",
    params: [{ name: "d", value: ["1s"] }],
    status: "False",
    reason: "InvalidParamType",
    mentions: '"d"',
  },
  // the value is inserted as it is: "$(params.d)" is then not a duration
  {
    name: "self-ref",
    params: [{ name: "d", value: "$(params.d)" }],
    status: "False",
    reason: "InvalidDuration",
    mentions: "$(params.d)",
  },
];

for (const flavour of FLAVOURS) {
  test(`${flavour}: an embedded Wait gets its params checked and substituted`, async () => {
    const scn = scenario();
    const suffix = flavour.toLowerCase();
    await Promise.all(
      cases.map((c) =>
        createRun(
          scn.admin,
          runObject(flavour, scn.namespace, {
            name: `${c.name}-${suffix}`,
            embedded: WAIT_SPEC,
            params: c.params,
          }),
        ),
      ),
    );
    for (const c of cases) {
      const run = await waitForRun(scn, flavour, `${c.name}-${suffix}`);
      const cond = runSucceeded(run)!;
      assert.equal(`${cond.status}/${cond.reason}`, `${c.status}/${c.reason}`, `${c.name}: ${cond.message}`);
      assert.ok(cond.message?.includes(c.mentions), `${c.name}: ${cond.message}`);
    }
    const ok = await waitForRun(scn, flavour, `sub-1s-${suffix}`);
    assert.deepEqual(ok.status?.results, [{ name: "waited", value: "1s" }]);
    assert.equal((await scn.services.find((s) => s.name === "wait-task")!.ops("/healthz")).status, 200);
  });
}
