// What a Wait run is at a given moment, from a hand-built TaskContext: the
// SDK's parts (start, cancel, timeout, retries) are its decide.test.ts's business.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type AnyRun, type Param, type ParamValue, runView } from "@quarry/api";
import {
  type CustomTask,
  decideTask,
  type RefOutcome,
  type Step,
  type TaskContext,
} from "@quarry/customtask-sdk";
import { parseWaitDuration, WAIT_GROUP, WAIT_KIND, WaitTask } from "./wait.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
/** A logger that drops everything (Wait does not log; the example depends on no logging library). */
const log: TaskContext["log"] = new Proxy({} as TaskContext["log"], {
  get: (_target, prop) => (prop === "child" ? () => log : () => undefined),
});

function mkRun(params: Param[] | undefined): AnyRun {
  return {
    apiVersion: "tekton.dev/v1beta1",
    kind: "CustomRun",
    metadata: { name: "w", namespace: "ns", uid: "u-1" },
    spec: {
      customRef: { apiVersion: `${WAIT_GROUP}/v1beta1`, kind: WAIT_KIND },
      ...(params ? { params } : {}),
    },
  };
}

interface Ctx {
  params?: Param[];
  /** ms since the attempt started */
  elapsed?: number;
  ref?: RefOutcome;
}

function context(c: Ctx): TaskContext {
  const run = mkRun(c.params);
  return {
    run,
    view: runView(run),
    params: {},
    spec: undefined,
    now: T0 + (c.elapsed ?? 0),
    startedAt: T0,
    attempt: 1,
    timeoutMs: 3_600_000,
    resolvedRef: async () => c.ref ?? { state: "none" },
    log,
    signal: new AbortController().signal,
  };
}

const duration = (value: ParamValue): Param[] => [{ name: "duration", value }];
const invalid = (reason: string, message: string): Step => ({
  type: "failed",
  reason,
  message,
  retryable: false,
});
const waiting = (requeueAfterMs: number): Step => ({
  type: "running",
  message: "Waiting for duration to elapse",
  requeueAfterMs,
});
const elapsed = (waited: string): Step => ({
  type: "succeeded",
  reason: "DurationElapsed",
  message: "The wait duration has elapsed",
  results: [{ name: "waited", value: waited }],
});

function resolved(object: unknown): RefOutcome {
  return { state: "resolved", request: "wait-0123", data: new Uint8Array(), object };
}
const definition = (params: unknown) =>
  resolved({ apiVersion: `${WAIT_GROUP}/v1beta1`, kind: "Wait", spec: { params } });

const ROWS: { name: string; ctx: Ctx; want: Step }[] = [
  // params
  { name: "no params", ctx: {}, want: invalid("MissingDuration", "The duration param was not passed") },
  {
    name: "empty duration",
    ctx: { params: duration("") },
    want: invalid("MissingDuration", "The duration param was not passed"),
  },
  {
    name: "extra params beside duration",
    ctx: { params: [{ name: "a", value: "1" }, ...duration("5s"), { name: "b", value: "2" }] },
    want: invalid("UnexpectedParams", "Found unexpected params: [a b]"),
  },
  {
    name: "extra params without duration name the extras (a misspelt duration shows up here)",
    ctx: { params: [{ name: "durration", value: "5s" }] },
    want: invalid("UnexpectedParams", "Found unexpected params: [durration]"),
  },

  // durations
  {
    name: "not a duration",
    ctx: { params: duration("five seconds") },
    want: invalid(
      "InvalidDuration",
      'The duration param was invalid: invalid duration "five seconds": expected e.g. "1m", "90s", "1m30s"',
    ),
  },
  {
    name: "no unit",
    ctx: { params: duration("5") },
    want: invalid(
      "InvalidDuration",
      'The duration param was invalid: invalid duration "5": expected e.g. "1m", "90s", "1m30s"',
    ),
  },
  {
    name: "negative",
    ctx: { params: duration("-5s") },
    want: invalid("InvalidDuration", 'The duration param was invalid: "-5s" is negative'),
  },
  {
    name: "an array",
    ctx: { params: duration(["5s"]) },
    want: invalid("InvalidDuration", 'The duration param was invalid: it must be a string such as "5s"'),
  },
  {
    name: "an object",
    ctx: { params: duration({ s: "5" }) },
    want: invalid("InvalidDuration", 'The duration param was invalid: it must be a string such as "5s"'),
  },
  {
    name: "over a week",
    ctx: { params: duration("169h") },
    want: invalid("InvalidDuration", 'The duration param was invalid: "169h" is longer than 168h'),
  },
  { name: "a week is fine", ctx: { params: duration("168h") }, want: waiting(168 * 3_600_000) },

  // time
  { name: "just started", ctx: { params: duration("5s") }, want: waiting(5000) },
  {
    name: "running: requeue after the remaining time",
    ctx: { params: duration("5s"), elapsed: 2000 },
    want: waiting(3000),
  },
  { name: "1ms left", ctx: { params: duration("1m30s"), elapsed: 89_999 }, want: waiting(1) },
  { name: "elapsed exactly", ctx: { params: duration("5s"), elapsed: 5000 }, want: elapsed("5s") },
  { name: "long elapsed", ctx: { params: duration("1m30s"), elapsed: 600_000 }, want: elapsed("1m30s") },
  { name: "zero duration", ctx: { params: duration("0s") }, want: elapsed("0s") },
  { name: "fractions", ctx: { params: duration("1.5s"), elapsed: 1500 }, want: elapsed("1.5s") },

  // remote definitions
  {
    name: "definition pending",
    ctx: { params: duration("5s"), ref: { state: "pending", request: "wait-0123", message: "resolving" } },
    want: { type: "running", message: "Waiting for definition from ResolutionRequest wait-0123" },
  },
  {
    name: "definition pending wins over param errors (the definition may declare them)",
    ctx: { ref: { state: "pending", request: "wait-0123" } },
    want: { type: "running", message: "Waiting for definition from ResolutionRequest wait-0123" },
  },
  {
    name: "definition failed, with Quarry's finer reason",
    ctx: {
      params: duration("5s"),
      ref: {
        state: "failed",
        request: "wait-0123",
        reason: "ResolutionFailed",
        quarryReason: "NotFound",
        message: 'path "wait.yaml" not found',
      },
    },
    want: invalid(
      "ResolutionFailed",
      'Could not resolve the Wait definition (ResolutionRequest wait-0123): NotFound: path "wait.yaml" not found',
    ),
  },
  {
    name: "definition timed out",
    ctx: {
      ref: { state: "failed", request: "wait-0123", reason: "ResolutionTimedOut", message: "too slow" },
    },
    want: invalid(
      "ResolutionTimedOut",
      "Could not resolve the Wait definition (ResolutionRequest wait-0123): too slow",
    ),
  },
  {
    name: "no request could be made (an invalid resolver name)",
    ctx: {
      ref: {
        state: "failed",
        request: "",
        reason: "InvalidResolver",
        message: 'resolver "Git" is not a valid resolver name',
      },
    },
    want: invalid(
      "InvalidResolver",
      'Could not resolve the Wait definition: resolver "Git" is not a valid resolver name',
    ),
  },
  {
    name: "the definition's duration default when the run passes none",
    ctx: { elapsed: 1000, ref: definition([{ name: "duration", default: "3s" }]) },
    want: waiting(2000),
  },
  {
    name: "the definition's default elapsed",
    ctx: { elapsed: 3000, ref: definition([{ name: "duration", type: "string", default: "3s" }]) },
    want: elapsed("3s"),
  },
  {
    name: "the run's duration beats the definition's default",
    ctx: { params: duration("10s"), ref: definition([{ name: "duration", default: "3s" }]) },
    want: waiting(10_000),
  },
  {
    name: "a definition without a default",
    ctx: { ref: definition([{ name: "duration" }]) },
    want: invalid("MissingDuration", "The duration param was not passed"),
  },
  {
    name: "a definition without params",
    ctx: { ref: resolved({ kind: "Wait" }) },
    want: invalid("MissingDuration", "The duration param was not passed"),
  },
  {
    name: "a definition that is not an object",
    ctx: { ref: resolved("just text") },
    want: invalid("MissingDuration", "The duration param was not passed"),
  },
  {
    name: "a definition whose default is no duration",
    ctx: { ref: definition([{ name: "duration", default: "soon" }]) },
    want: invalid(
      "InvalidDuration",
      'The duration param was invalid: invalid duration "soon": expected e.g. "1m", "90s", "1m30s"',
    ),
  },
];

test("WaitTask.reconcile", async () => {
  const task: CustomTask = new WaitTask();
  assert.equal(task.group, "wait.testing.tekton.dev");
  assert.equal(task.kind, "Wait");
  assert.equal(task.params, undefined, "Wait checks its own params (Tekton's reasons), the SDK does not");
  for (const row of ROWS) assert.deepEqual(await task.reconcile(context(row.ctx)), row.want, row.name);
});

/** What a Wait started at `startTime` is at `now`, as the SDK decides and counts it. */
async function waitAt(startTime: string, now: number): Promise<Step | string> {
  const run: AnyRun = {
    ...mkRun(duration("5s")),
    status: {
      startTime,
      conditions: [
        { type: "Succeeded", status: "Unknown", reason: "Running", lastTransitionTime: startTime },
      ],
    },
  };
  const decision = decideTask(run, new WaitTask(), { now, defaultTimeoutMs: 3_600_000 });
  if (decision.type !== "invoke") return decision.type;
  return new WaitTask().reconcile({
    ...context({}),
    run,
    view: runView(run),
    now,
    startedAt: decision.startedAt,
  });
}

test("a Wait never ends early: whole-second startTimes count from the end of their second", async () => {
  // startTime is written in whole seconds: the run may have started as late as T0 + 999ms
  assert.deepEqual(await waitAt("2026-01-01T00:00:00Z", T0 + 5999), waiting(1));
  assert.deepEqual(await waitAt("2026-01-01T00:00:00Z", T0 + 6000), elapsed("5s"));
  // a stamp with a fraction is exact
  assert.deepEqual(await waitAt("2026-01-01T00:00:00.123Z", T0 + 5122), waiting(1));
  assert.deepEqual(await waitAt("2026-01-01T00:00:00.123Z", T0 + 5123), elapsed("5s"));
});

test("parseWaitDuration", () => {
  const rows: { value: ParamValue | undefined; want: { ms: number } | string }[] = [
    { value: undefined, want: "MissingDuration" },
    { value: "", want: "MissingDuration" },
    { value: " -1ms", want: "InvalidDuration" },
    { value: "1h1m1s", want: { ms: 3_661_000 } },
    { value: "250ms", want: { ms: 250 } },
    { value: "0", want: { ms: 0 } },
    { value: "1d", want: "InvalidDuration" },
  ];
  for (const row of rows) {
    const got = parseWaitDuration(row.value);
    if (typeof row.want === "string")
      assert.equal("type" in got && got.type === "failed" && got.reason, row.want);
    else assert.deepEqual(got, row.want, String(row.value));
  }
});
