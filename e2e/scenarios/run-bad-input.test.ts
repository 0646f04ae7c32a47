// Run specs nobody can act on, at both layers that check them. Each bad spec
// is paired with what Quarry's run CRD says at admission (a 422 naming the
// field) and what the run-controller says when Tekton's schemaless CRDs admit
// it anyway (the run fails at once, False/InvalidRunSpec, naming the field,
// long before the initial-update timeout, and the controller carries on).
// Which half runs depends on the control plane's run CRDs
// (QUARRY_E2E_RUN_CRDS): "quarry" (default) the admission half on the shared
// control plane and the controller half on a private one serving Tekton's
// schemaless CRDs; "tekton" the controller half on the shared one; the exact messages are also unit-tested in
// services/run-controller/src/validate.test.ts. In every mode, Wait's own
// checks of what it is given end a run with Wait's reasons.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type AnyRun, type Param, type RunFlavour, resolutionRequests } from "@quarry/api";
import { startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi } from "@quarry/devcluster/install";
import { adminClient } from "@quarry/harness/env";
import {
  createRun,
  FLAVOURS,
  type RunInput,
  runEventCountsFor,
  runObject,
  runSucceeded,
  WAIT_REF,
  waitForRun,
} from "@quarry/harness/runs";
import { newScenario, type Scenario, setConfig, useScenario } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";

const mode = process.env.QUARRY_E2E_RUN_CRDS ?? "quarry";
const NOBODY = { apiVersion: "example.dev/v1", kind: "Nobody" } as const;

const scenario = useScenario("run-bad", {
  // the timeout is far off: an InvalidRunSpec within seconds is the spec check, not the timeout
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "60s", "enforcement-grace": "2s" }),
  start: mode === "none" ? [] : ["run-controller", "wait-task"],
});

const many = (n: number, first: Param[] = []): Param[] => [
  ...first,
  ...Array.from({ length: n - first.length }, (_, i) => ({ name: `p${i}`, value: "v" })),
];

interface BadRun {
  flavour: RunFlavour;
  input: RunInput;
  /** What Quarry's CRD answers (a 422). */
  admission: RegExp;
  /** The message of the InvalidRunSpec condition, where a schemaless CRD admits the run. */
  problem: string;
}

/** Names a kind nobody serves, so only the run-controller ever acts on these runs. */
const BAD: BadRun[] = [
  {
    flavour: "CustomRun",
    input: { name: "both", ref: NOBODY, embedded: NOBODY },
    admission: /spec\.customRef and spec\.customSpec are mutually exclusive: set exactly one/,
    problem: "spec.customRef and spec.customSpec are both set; set exactly one",
  },
  {
    flavour: "Run",
    input: { name: "both", ref: NOBODY, embedded: NOBODY },
    admission: /spec\.ref and spec\.spec are mutually exclusive: set exactly one/,
    problem: "spec.ref and spec.spec are both set; set exactly one",
  },
  {
    flavour: "CustomRun",
    input: { name: "neither" },
    admission: /a CustomRun needs spec\.customRef .* or spec\.customSpec/,
    problem: "neither spec.customRef nor spec.customSpec is set; set exactly one",
  },
  {
    flavour: "Run",
    input: { name: "neither" },
    admission: /a Run needs spec\.ref .* or spec\.spec/,
    problem: "neither spec.ref nor spec.spec is set; set exactly one",
  },
  {
    flavour: "CustomRun",
    input: { name: "no-kind", ref: { apiVersion: NOBODY.apiVersion, name: "x" } },
    admission: /spec\.customRef\.kind: Required value/,
    problem: "spec.customRef.kind is required",
  },
  {
    flavour: "CustomRun",
    input: { name: "no-apiversion", ref: { kind: NOBODY.kind } },
    admission: /spec\.customRef\.apiVersion: Required value/,
    problem: "spec.customRef.apiVersion is required",
  },
  {
    flavour: "Run",
    input: { name: "spec-no-kind", embedded: { apiVersion: NOBODY.apiVersion } as RunInput["embedded"] },
    admission: /spec\.spec\.kind: Required value/,
    problem: "spec.spec.kind is required",
  },
  {
    flavour: "CustomRun",
    input: { name: "wrong-status", ref: NOBODY, status: "Cancelled" },
    admission: /spec\.status: Unsupported value: "Cancelled"/,
    problem: 'spec.status "Cancelled" is not "RunCancelled" (the only value it takes)',
  },
  {
    flavour: "Run",
    input: { name: "message-only", ref: NOBODY, statusMessage: "why" },
    admission: /statusMessage may only be set together with status/,
    problem: "spec.statusMessage is set but spec.status is not",
  },
  {
    flavour: "CustomRun",
    input: { name: "3000-params", ref: NOBODY, params: many(3000) },
    admission: /spec\.params: Too many: 3000: must have at most 256 items/,
    problem: "spec.params has 3000 entries; at most 256 are allowed",
  },
  {
    flavour: "Run",
    input: {
      name: "duplicate-params",
      ref: NOBODY,
      params: [
        { name: "a", value: "1" },
        { name: "a", value: "2" },
      ],
    },
    admission: /spec\.params: .*param names must be unique/,
    problem: 'spec.params: "a" is given more than once',
  },
  {
    // a remote ref: the run fails before anyone is asked to resolve it
    flavour: "CustomRun",
    input: {
      name: "duplicate-params-remote",
      ref: { ...NOBODY, resolver: "git", params: [{ name: "url", value: "https://example.com/r.git" }] },
      params: [
        { name: "a", value: "1" },
        { name: "a", value: "2" },
      ],
    },
    admission: /spec\.params: .*param names must be unique/,
    problem: 'spec.params: "a" is given more than once',
  },
];

const label = (b: BadRun) => `${b.flavour} ${b.input.name}`;

test("Quarry's run CRDs reject each bad spec at admission (422) with a message naming the field", {
  skip: mode === "quarry" ? false : `the control plane has run CRDs "${mode}", not Quarry's`,
}, async () => {
  const scn = scenario();
  const failures: string[] = [];
  for (const bad of BAD) {
    try {
      await createRun(scn.admin, runObject(bad.flavour, scn.namespace, bad.input));
      failures.push(`${label(bad)}: admitted`);
    } catch (err) {
      if (!isApiError(err, 422)) failures.push(`${label(bad)}: not a 422: ${String(err)}`);
      else if (!bad.admission.test(err.message)) failures.push(`${label(bad)}: ${err.message}`);
    }
  }
  assert.deepEqual(failures, []);
});

/** The controller half: every bad run admitted, each fails at once with InvalidRunSpec. */
async function assertInvalidRunSpecs(scn: Scenario): Promise<void> {
  const runController = scn.services.find((s) => s.name === "run-controller")!;
  const created = await Promise.all(
    BAD.map((bad) => createRun(scn.admin, runObject(bad.flavour, scn.namespace, bad.input))),
  );
  const failures: string[] = [];
  for (const [i, bad] of BAD.entries()) {
    const run: AnyRun = await waitForRun(scn, bad.flavour, bad.input.name, undefined, 10_000);
    const c = runSucceeded(run);
    if (c?.status !== "False" || c.reason !== "InvalidRunSpec" || c.message !== bad.problem)
      failures.push(`${label(bad)}: ${JSON.stringify(c)}`);
    // "at once": whole seconds on both stamps, far from the 60s initial-update timeout
    const took =
      Date.parse(run.status?.completionTime ?? "") - Date.parse(created[i]?.metadata.creationTimestamp ?? "");
    if (!(took <= 5000)) failures.push(`${label(bad)}: failed ${took} ms after creation`);
  }
  assert.deepEqual(failures, []);

  // nobody was asked to resolve the definition of a run that failed at once
  const requests = await scn.admin.list(resolutionRequests, scn.namespace);
  assert.deepEqual(
    requests.items.map((r) => r.metadata.name),
    [],
  );
  for (const flavour of FLAVOURS) {
    const names = BAD.filter((b) => b.flavour === flavour).map((b) => b.input.name);
    const events = await runEventCountsFor(scn.admin, scn.namespace, flavour, "InvalidRunSpec", names);
    for (const bad of BAD.filter((b) => b.flavour === flavour))
      assert.deepEqual(
        events.get(bad.input.name),
        { objects: 1, count: 1 },
        `${label(bad)}: one Warning Event`,
      );
  }
  // and the controller is still the same process, serving
  const exited = await Promise.race([
    runController.exited.then(() => true),
    new Promise((r) => setTimeout(r, 0, false)),
  ]);
  assert.equal(exited, false, "run-controller exited");
  assert.equal((await runController.ops("/healthz")).status, 200);
}

test("admitted by schemaless CRDs, each bad run fails at once with InvalidRunSpec naming the field", {
  skip: mode === "none" ? "no run CRDs installed" : false,
  timeout: 120_000,
}, async () => {
  if (mode === "tekton") return assertInvalidRunSpecs(scenario());
  // the shared control plane has Quarry's CRDs, which refuse these at admission: prove the
  // controller half on a private control plane serving Tekton's schemaless run CRDs
  const cp = await startControlPlane();
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  let own: Scenario | undefined;
  try {
    await installQuarryApi(adminClient(info), { runCrds: "tekton" });
    own = await newScenario("run-bad-tekton", { cp: info });
    await setConfig(own, "run-controller-config", {
      "initial-update-timeout": "60s",
      "enforcement-grace": "2s",
    });
    await own.start("run-controller");
    await assertInvalidRunSpecs(own);
  } finally {
    await own?.cleanup();
    await cp.stop();
  }
});

// Wait's checks of its params: a run the CRD admits but Wait cannot act on ends with Wait's reason
const WAIT_BAD: { name: string; params: Param[]; reason: string; message: string }[] = [
  {
    name: "malformed-duration",
    params: [{ name: "duration", value: "1 day" }],
    reason: "InvalidDuration",
    message: 'The duration param was invalid: invalid duration "1 day": expected e.g. "1m", "90s", "1m30s"',
  },
  {
    name: "negative-duration",
    params: [{ name: "duration", value: "-5s" }],
    reason: "InvalidDuration",
    message: 'The duration param was invalid: "-5s" is negative',
  },
  {
    // Wait declares no params, so nothing substitutes the reference: it is not a duration
    name: "self-reference",
    params: [{ name: "duration", value: "$(params.duration)" }],
    reason: "InvalidDuration",
    message:
      'The duration param was invalid: invalid duration "$(params.duration)": expected e.g. "1m", "90s", "1m30s"',
  },
  {
    name: "unknown-param",
    params: [
      { name: "duration", value: "1s" },
      { name: "extra", value: "x" },
    ],
    reason: "UnexpectedParams",
    message: "Found unexpected params: [extra]",
  },
  {
    name: "256-params",
    params: many(256, [{ name: "duration", value: "1s" }]),
    reason: "UnexpectedParams",
    message: "Found unexpected params: [p0 p1 p2 p3 p4 p5 p6 p7 p8 p9 … and 245 more]",
  },
];

for (const flavour of FLAVOURS) {
  test(`${flavour}: Wait given a bad duration or unexpected params fails with Wait's reason`, {
    skip: mode === "none" ? "no run CRDs installed" : false,
  }, async () => {
    const scn = scenario();
    const name = (n: string) => `wait-${n}-${flavour.toLowerCase()}`;
    await Promise.all(
      WAIT_BAD.map((w) =>
        createRun(
          scn.admin,
          runObject(flavour, scn.namespace, { name: name(w.name), ref: WAIT_REF, params: w.params }),
        ),
      ),
    );
    const failures: string[] = [];
    for (const w of WAIT_BAD) {
      const c = runSucceeded(await waitForRun(scn, flavour, name(w.name), undefined, 15_000));
      if (c?.status !== "False" || c.reason !== w.reason || c.message !== w.message)
        failures.push(`${w.name}: ${JSON.stringify(c)}`);
    }
    assert.deepEqual(failures, []);
  });
}
