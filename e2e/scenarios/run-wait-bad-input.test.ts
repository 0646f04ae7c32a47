// A Wait given something it cannot wait on fails at once with the reason
// Tekton's Wait gives (MissingDuration, UnexpectedParams, InvalidDuration,
// UnexpectedName), never expanding a param reference in a value, and the
// Wait controller carries on serving.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRun,
  enforcementCount,
  FLAVOURS,
  type RunInput,
  runEvents,
  runObject,
  runSucceeded,
  WAIT_REF,
  waitForRun,
} from "@quarry/harness/runs";
import { setConfig, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("run-wait-bad", {
  setup: (scn) =>
    setConfig(scn, "run-controller-config", { "initial-update-timeout": "5s", "enforcement-grace": "20s" }),
  start: ["run-controller", "wait-task"],
});

const PARSE_HINT = 'expected e.g. "1m", "90s", "1m30s"';

interface Case {
  name: string;
  input: Omit<RunInput, "name">;
  reason: string;
  message: string;
}

const cases: Case[] = [
  {
    name: "no-duration",
    input: { ref: WAIT_REF },
    reason: "MissingDuration",
    message: "The duration param was not passed",
  },
  {
    name: "empty-duration",
    input: { ref: WAIT_REF, params: [{ name: "duration", value: "" }] },
    reason: "MissingDuration",
    message: "The duration param was not passed",
  },
  {
    name: "extra-params",
    input: {
      ref: WAIT_REF,
      params: [
        { name: "duration", value: "1s" },
        { name: "extra", value: "x" },
        { name: "more", value: "y" },
      ],
    },
    reason: "UnexpectedParams",
    message: "Found unexpected params: [extra more]",
  },
  {
    name: "forever",
    input: { ref: WAIT_REF, params: [{ name: "duration", value: "forever" }] },
    reason: "InvalidDuration",
    message: `The duration param was invalid: invalid duration "forever": ${PARSE_HINT}`,
  },
  {
    name: "negative",
    input: { ref: WAIT_REF, params: [{ name: "duration", value: "-1s" }] },
    reason: "InvalidDuration",
    message: 'The duration param was invalid: "-1s" is negative',
  },
  {
    name: "named-ref",
    input: { ref: { ...WAIT_REF, name: "foo" }, params: [{ name: "duration", value: "1s" }] },
    reason: "UnexpectedName",
    message: 'Wait takes no named definition, found ref name "foo"',
  },
  {
    name: "array-duration",
    input: { ref: WAIT_REF, params: [{ name: "duration", value: ["1s"] }] },
    reason: "InvalidDuration",
    message: 'The duration param was invalid: it must be a string such as "5s"',
  },
  {
    name: "self-reference",
    input: { ref: WAIT_REF, params: [{ name: "duration", value: "$(params.duration)" }] },
    reason: "InvalidDuration",
    message: `The duration param was invalid: invalid duration "$(params.duration)": ${PARSE_HINT}`,
  },
];

for (const flavour of FLAVOURS) {
  test(`${flavour}: bad Wait input fails at once with Tekton's Wait reasons; the Wait controller carries on`, async () => {
    const scn = scenario();
    const wait = scn.services.find((s) => s.name === "wait-task")!;
    let exited = false;
    void wait.exited.then(() => {
      exited = true;
    });
    await Promise.all(
      cases.map(async (tc) => {
        const name = `${tc.name}-${flavour.toLowerCase()}`;
        const createdAt = Date.now();
        await createRun(scn.admin, runObject(flavour, scn.namespace, { name, ...tc.input }));
        const run = await waitForRun(scn, flavour, name, undefined, 10_000);
        const tookMs = Date.now() - createdAt;
        const c = runSucceeded(run)!;
        assert.deepEqual(
          { status: c.status, reason: c.reason, message: c.message },
          { status: "False", reason: tc.reason, message: tc.message },
          tc.name,
        );
        assert.ok(tookMs < 4000, `${tc.name}: failed ${tookMs} ms after the create call`);
        // started by the SDK before the Wait looked at it, then ended
        assert.ok(run.status?.startTime, `${tc.name}: startTime`);
        assert.equal(run.status?.completionTime, c.lastTransitionTime, tc.name);
        assert.equal(run.status?.results, undefined, tc.name);
        const events = await waitUntil(`${tc.name}: the Wait controller's Event`, async () => {
          const list = await runEvents(scn.admin, flavour, scn.namespace, name);
          return list.length > 0 && list;
        });
        assert.deepEqual(
          events,
          [{ type: "Warning", reason: tc.reason, message: tc.message, component: "wait-task" }],
          tc.name,
        );
      }),
    );
    assert.equal(exited, false, "the Wait controller exited");
    assert.equal((await wait.ops("/healthz")).status, 200);
    // ...and still serves a good run
    const ok = `good-${flavour.toLowerCase()}`;
    await createRun(
      scn.admin,
      runObject(flavour, scn.namespace, {
        name: ok,
        ref: WAIT_REF,
        params: [{ name: "duration", value: "1ms" }],
      }),
    );
    assert.equal(
      runSucceeded(await waitForRun(scn, flavour, ok, undefined, 10_000))?.reason,
      "DurationElapsed",
    );
    const runController = scn.services.find((s) => s.name === "run-controller")!;
    assert.doesNotMatch((await runController.ops("/metrics")).body, /quarry_run_enforcements_total\{/);
    assert.equal(await enforcementCount(runController, "ControllerNotFound", flavour), 0);
  });
}
