// The SDK's decisions, table-driven: given a run, a task and the time, which
// decision comes out (skip, a status write, or the author's reconcile), and how an
// author's Step becomes a status write.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type AnyRun, type Condition, getCondition, type Param, type RunStatus } from "@quarry/api";
import {
  applyStep,
  attemptStart,
  cancelMessage,
  decideTask,
  runTimeoutMs,
  servesRun,
  type TaskDecision,
} from "./decide.ts";
import {
  markCancelled,
  markFailed,
  markRunning,
  markSucceeded,
  markTimedOut,
  retriesUsed,
  retry,
  type StatusChange,
} from "./status.ts";
import type { CustomTask, DeclaredParam, Step } from "./task.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** A startTime stamped at(0) (whole seconds) counts from the end of its second. */
const COUNTED_FROM = T0 + 1000;
/** A startTime with a fraction counts from that very instant. */
const FRACTIONAL = "2026-01-01T00:00:00.123Z";
const DEFAULT_TIMEOUT_MS = 60_000;
const WAIT_API = "wait.testing.tekton.dev/v1beta1";
/** What Tekton's PipelineRun writes into spec.statusMessage when it cancels its CustomRuns. */
const PIPELINE_CANCEL_MSG = "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.";

type Flavour = "Run" | "CustomRun";

const running = (since = 0): Condition => ({
  type: "Succeeded",
  status: "Unknown",
  reason: "Running",
  lastTransitionTime: at(since),
});

interface RunOpts {
  kind?: Flavour;
  /** Replaces the default status (started at T0, Running). */
  status?: RunStatus | undefined;
  timeout?: string;
  retries?: number;
  params?: Param[];
  /** spec.status RunCancelled, with this statusMessage when a string. */
  cancel?: true | string;
  ref?: { apiVersion?: string; kind?: string; name?: string };
  /** Use an embedded spec with this apiVersion/kind instead of a ref. */
  embedded?: { apiVersion: string; kind: string };
}

function mkRun(opts: RunOpts = {}): AnyRun {
  const kind = opts.kind ?? "CustomRun";
  const metadata = { name: "w", namespace: "ns", uid: "u-1", generation: 1 };
  const spec: Record<string, unknown> = {};
  if (opts.timeout !== undefined) spec.timeout = opts.timeout;
  if (opts.retries !== undefined) spec.retries = opts.retries;
  if (opts.params) spec.params = opts.params;
  if (opts.cancel) spec.status = "RunCancelled";
  if (typeof opts.cancel === "string") spec.statusMessage = opts.cancel;
  const target = { apiVersion: WAIT_API, kind: "Wait", ...opts.ref };
  if (opts.embedded) spec[kind === "Run" ? "spec" : "customSpec"] = opts.embedded;
  else spec[kind === "Run" ? "ref" : "customRef"] = target;
  const r = (
    kind === "Run"
      ? { apiVersion: "tekton.dev/v1alpha1", kind, metadata, spec }
      : { apiVersion: "tekton.dev/v1beta1", kind, metadata, spec }
  ) as AnyRun;
  const status = "status" in opts ? opts.status : { startTime: at(0), conditions: [running(0)] };
  if (status) r.status = status;
  return r;
}

function mkTask(extra: Partial<Pick<CustomTask, "params" | "allowsRefName">> = {}): CustomTask {
  return { group: "wait.testing.tekton.dev", kind: "Wait", reconcile: () => ({ type: "running" }), ...extra };
}

/** The run after a merge patch of `change` into its status (null removes). */
function applied(run: AnyRun, change: StatusChange): AnyRun {
  const status: Record<string, unknown> = { ...run.status };
  for (const [k, v] of Object.entries(change)) {
    if (v === null) delete status[k];
    else status[k] = v;
  }
  return { ...run, status } as AnyRun;
}

function failWrite(run: AnyRun, now: number, reason: string, message: string): TaskDecision {
  return {
    type: "write",
    write: { change: markFailed(run, now, reason, message), event: { type: "Warning", reason, message } },
  };
}

interface PlanRow {
  name: string;
  run: AnyRun;
  task?: CustomTask;
  /** ms after T0 */
  now?: number;
  want: TaskDecision | ((run: AnyRun, now: number) => TaskDecision);
}

/** The author's reconcile, for a run started at(0) and decided at T0 + 10s (9s after COUNTED_FROM). */
const invoke = (over: Partial<Extract<TaskDecision, { type: "invoke" }>> = {}): TaskDecision => ({
  type: "invoke",
  params: {},
  spec: undefined,
  startedAt: COUNTED_FROM,
  timeoutMs: DEFAULT_TIMEOUT_MS,
  remainingMs: DEFAULT_TIMEOUT_MS - 9_000,
  ...over,
});

const startedCond = (since: number): Condition => ({
  type: "Succeeded",
  status: "Unknown",
  reason: "Started",
  lastTransitionTime: at(since),
});

/** What a run not started yet is decided from: the run as started (at `since`), and those fields. */
function startedAs(run: AnyRun, startTime: string, since: number): { run: AnyRun; base: StatusChange } {
  const base: StatusChange = { startTime, conditions: [startedCond(since)] };
  return { run: { ...run, status: { ...run.status, ...base } } as AnyRun, base };
}

const cancelled =
  (reason: string, message: string) =>
  (run: AnyRun, now: number): TaskDecision => ({
    type: "write",
    write: {
      change: markCancelled(run, now, message),
      stop: "cancelled",
      event: { type: "Normal", reason, message },
    },
  });

const PLAN_ROWS: PlanRow[] = [
  // whose run
  { name: "another kind", run: mkRun({ ref: { kind: "Sleep" } }), want: { type: "skip" } },
  {
    name: "another group",
    run: mkRun({ ref: { apiVersion: "testing.tekton.dev/v1" } }),
    want: { type: "skip" },
  },
  {
    name: "apiVersion without version",
    run: mkRun({ ref: { apiVersion: "wait.testing.tekton.dev" } }),
    want: { type: "skip" },
  },
  { name: "no apiVersion", run: mkRun({ ref: { apiVersion: "" } }), want: { type: "skip" } },
  {
    name: "another version of the group is ours",
    run: mkRun({ ref: { apiVersion: "wait.testing.tekton.dev/v1alpha1" } }),
    want: invoke(),
  },
  {
    name: "embedded customSpec is ours",
    run: mkRun({ embedded: { apiVersion: WAIT_API, kind: "Wait" } }),
    want: invoke(),
  },
  {
    name: "embedded spec of a Run is ours",
    run: mkRun({ kind: "Run", embedded: { apiVersion: WAIT_API, kind: "Wait" } }),
    want: invoke(),
  },

  // done
  {
    name: "succeeded run",
    run: mkRun({ status: { startTime: at(0), conditions: [{ type: "Succeeded", status: "True" }] } }),
    want: { type: "skip" },
  },
  {
    name: "failed run, even when cancelled and long timed out",
    run: mkRun({
      cancel: true,
      status: { startTime: at(0), conditions: [{ type: "Succeeded", status: "False" }] },
    }),
    now: 10 * DEFAULT_TIMEOUT_MS,
    want: { type: "skip" },
  },

  // not started: started, and in the same write what the run is then (one write, not two)
  {
    name: "no status: started, and the author's reconcile sees the started run",
    run: mkRun({ status: undefined }),
    want: (run) =>
      invoke({
        ...startedAs(run, at(10_000), 10_000),
        startedAt: T0 + 11_000,
        remainingMs: DEFAULT_TIMEOUT_MS + 1000,
      }),
  },
  {
    name: "startTime without a Succeeded condition: that startTime kept",
    run: mkRun({ status: { startTime: at(0) } }),
    want: (run) => invoke(startedAs(run, at(0), 10_000)),
  },
  {
    name: "condition without startTime, cancelled and with a bad timeout: started and cancelled in one write",
    run: mkRun({ cancel: true, timeout: "soon", status: { conditions: [running(0)] } }),
    want: {
      type: "write",
      write: {
        change: {
          startTime: at(10_000),
          conditions: [
            {
              type: "Succeeded",
              status: "False",
              reason: "CustomRunCancelled",
              message: 'CustomRun "w" was cancelled',
              lastTransitionTime: at(10_000),
            },
          ],
          completionTime: at(10_000),
        },
        stop: "cancelled",
        event: { type: "Normal", reason: "CustomRunCancelled", message: 'CustomRun "w" was cancelled' },
      },
    },
  },
  {
    name: "no status, a bad param: started and failed in one write",
    run: mkRun({ status: undefined, params: [{ name: "duration", value: ["5s"] }] }),
    task: mkTask({ params: declared() }),
    want: {
      type: "write",
      write: {
        change: {
          startTime: at(10_000),
          conditions: [
            {
              type: "Succeeded",
              status: "False",
              reason: "InvalidParamType",
              message: 'param "duration" is declared string, but was given an array',
              lastTransitionTime: at(10_000),
            },
          ],
          completionTime: at(10_000),
        },
        event: {
          type: "Warning",
          reason: "InvalidParamType",
          message: 'param "duration" is declared string, but was given an array',
        },
      },
    },
  },
  {
    name: "startTime long past, no condition: started and timed out in one write",
    run: mkRun({ status: { startTime: at(0) } }),
    now: 10 * DEFAULT_TIMEOUT_MS,
    want: {
      type: "write",
      write: {
        change: {
          startTime: at(0),
          conditions: [
            {
              type: "Succeeded",
              status: "False",
              reason: "CustomRunTimedOut",
              message: 'CustomRun "w" failed to finish within "1m0s"',
              lastTransitionTime: at(10 * DEFAULT_TIMEOUT_MS),
            },
          ],
          completionTime: at(10 * DEFAULT_TIMEOUT_MS),
        },
        stop: "timedOut",
        requeueAfterMs: undefined,
        event: {
          type: "Warning",
          reason: "CustomRunTimedOut",
          message: 'CustomRun "w" failed to finish within "1m0s"',
        },
      },
    },
  },

  // cancel
  {
    name: "CustomRun cancelled by its PipelineRun",
    run: mkRun({ cancel: PIPELINE_CANCEL_MSG }),
    want: cancelled("CustomRunCancelled", PIPELINE_CANCEL_MSG),
  },
  {
    name: "CustomRun cancelled without a message",
    run: mkRun({ cancel: true }),
    want: cancelled("CustomRunCancelled", 'CustomRun "w" was cancelled'),
  },
  {
    name: "Run cancelled by its PipelineRun",
    run: mkRun({ kind: "Run", cancel: "Run cancelled as the PipelineRun it belongs to has been cancelled." }),
    want: cancelled("RunCancelled", "Run cancelled as the PipelineRun it belongs to has been cancelled."),
  },
  {
    name: "Run cancelled without a message",
    run: mkRun({ kind: "Run", cancel: true }),
    want: cancelled("RunCancelled", 'Run "w" was cancelled'),
  },
  {
    name: "cancel wins over a timeout",
    run: mkRun({ cancel: true, timeout: "1s" }),
    want: cancelled("CustomRunCancelled", 'CustomRun "w" was cancelled'),
  },
  {
    name: "cancel wins over a malformed timeout",
    run: mkRun({ cancel: true, timeout: "soon" }),
    want: cancelled("CustomRunCancelled", 'CustomRun "w" was cancelled'),
  },

  // timeout
  { name: "unset: the default, not yet", run: mkRun(), want: invoke() },
  {
    name: "unset: the default, exactly reached is not past (counted from the end of startTime's second)",
    run: mkRun(),
    now: 1000 + DEFAULT_TIMEOUT_MS,
    want: invoke({ remainingMs: 0 }),
  },
  {
    name: "unset: the default, 1ms past",
    run: mkRun(),
    now: 1000 + DEFAULT_TIMEOUT_MS + 1,
    want: (run, now) => ({
      type: "write",
      write: {
        change: markTimedOut(run, now, 'CustomRun "w" failed to finish within "1m0s"'),
        stop: "timedOut",
        requeueAfterMs: undefined,
        event: {
          type: "Warning",
          reason: "CustomRunTimedOut",
          message: 'CustomRun "w" failed to finish within "1m0s"',
        },
      },
    }),
  },
  {
    name: "spec.timeout overrides the default",
    run: mkRun({ timeout: "1h30m" }),
    want: invoke({ timeoutMs: 90 * 60_000, remainingMs: 90 * 60_000 - 9_000 }),
  },
  {
    name: "a fractional startTime counts from that instant: exactly reached is not past",
    run: mkRun({ status: { startTime: FRACTIONAL, conditions: [running(0)] } }),
    now: 123 + DEFAULT_TIMEOUT_MS,
    want: invoke({ startedAt: T0 + 123, remainingMs: 0 }),
  },
  {
    name: "a fractional startTime counts from that instant: 1ms past",
    run: mkRun({ status: { startTime: FRACTIONAL, conditions: [running(0)] } }),
    now: 123 + DEFAULT_TIMEOUT_MS + 1,
    want: (run, now) => ({
      type: "write",
      write: {
        change: markTimedOut(run, now, 'CustomRun "w" failed to finish within "1m0s"'),
        stop: "timedOut",
        requeueAfterMs: undefined,
        event: {
          type: "Warning",
          reason: "CustomRunTimedOut",
          message: 'CustomRun "w" failed to finish within "1m0s"',
        },
      },
    }),
  },
  {
    name: '"0s" is no timeout',
    run: mkRun({ timeout: "0s" }),
    now: 1000 * DEFAULT_TIMEOUT_MS,
    want: invoke({ timeoutMs: 0, remainingMs: undefined }),
  },
  {
    name: '"0" is no timeout',
    run: mkRun({ timeout: "0" }),
    now: 1000 * DEFAULT_TIMEOUT_MS,
    want: invoke({ timeoutMs: 0, remainingMs: undefined }),
  },
  {
    name: "Run timed out, retries exhausted",
    run: mkRun({
      kind: "Run",
      timeout: "5s",
      retries: 1,
      status: {
        startTime: at(0),
        conditions: [running(0)],
        retriesStatus: [{ conditions: [{ type: "Succeeded", status: "False", reason: "RunTimedOut" }] }],
      },
    }),
    want: (run, now) => ({
      type: "write",
      write: {
        change: markTimedOut(run, now, 'Run "w" failed to finish within "5s"'),
        stop: "timedOut",
        requeueAfterMs: undefined,
        event: { type: "Warning", reason: "RunTimedOut", message: 'Run "w" failed to finish within "5s"' },
      },
    }),
  },
  {
    name: "timed out with retries left: retried with the flavour's timed-out reason",
    run: mkRun({ timeout: "5s", retries: 2 }),
    want: (run, now) => ({
      type: "write",
      write: {
        change: retry(run, now, "CustomRunTimedOut", 'CustomRun "w" failed to finish within "5s"'),
        stop: "timedOut",
        requeueAfterMs: 0,
        event: {
          type: "Warning",
          reason: "CustomRunTimedOut",
          message: 'CustomRun "w" failed to finish within "5s"',
        },
      },
    }),
  },
  {
    name: "malformed timeout",
    run: mkRun({ timeout: "soon" }),
    want: (run, now) =>
      failWrite(run, now, "InvalidTimeout", 'spec.timeout "soon" is not a duration such as "1m30s"'),
  },
  {
    name: "negative timeout",
    run: mkRun({ timeout: "-5s" }),
    want: (run, now) => failWrite(run, now, "InvalidTimeout", 'spec.timeout "-5s" is negative'),
  },
  {
    name: "malformed timeout is not retried",
    run: mkRun({ timeout: "5 minutes", retries: 3 }),
    want: (run, now) =>
      failWrite(run, now, "InvalidTimeout", 'spec.timeout "5 minutes" is not a duration such as "1m30s"'),
  },

  // named refs
  {
    name: "named ref when the task takes none",
    run: mkRun({ ref: { name: "five-seconds" } }),
    want: (run, now) =>
      failWrite(run, now, "UnexpectedName", 'Wait takes no named definition, found ref name "five-seconds"'),
  },
  {
    name: "named ref when the task allows it",
    run: mkRun({ ref: { name: "five-seconds" } }),
    task: mkTask({ allowsRefName: true }),
    want: invoke(),
  },

  // params
  {
    name: "no declarations: params are the author's to read",
    run: mkRun({ params: [{ name: "anything", value: "x" }] }),
    want: invoke(),
  },
  {
    name: "declared params with defaults applied",
    run: mkRun({ params: [{ name: "duration", value: "5s" }] }),
    task: mkTask({ params: declared() }),
    want: invoke({ params: { duration: "5s", mode: "fast" } }),
  },
  {
    name: "declared param missing",
    run: mkRun(),
    task: mkTask({ params: declared() }),
    want: (run, now) =>
      failWrite(run, now, "MissingParam", 'param "duration" has no default and was not given'),
  },
  {
    name: "undeclared param",
    run: mkRun({
      params: [
        { name: "duration", value: "5s" },
        { name: "extra", value: "x" },
      ],
    }),
    task: mkTask({ params: declared() }),
    want: (run, now) =>
      failWrite(run, now, "UnknownParam", 'param "extra" is not declared (declared: "duration", "mode")'),
  },
  {
    name: "declared param of the wrong type",
    run: mkRun({ params: [{ name: "duration", value: ["5s"] }] }),
    task: mkTask({ params: declared() }),
    want: (run, now) =>
      failWrite(run, now, "InvalidParamType", 'param "duration" is declared string, but was given an array'),
  },
];

function declared(): DeclaredParam[] {
  return [
    { name: "duration", type: "string" },
    { name: "mode", default: "fast" },
  ];
}

test("decideTask", () => {
  for (const row of PLAN_ROWS) {
    const now = T0 + (row.now ?? 10_000);
    const before = structuredClone(row.run);
    const got = decideTask(row.run, row.task ?? mkTask(), { now, defaultTimeoutMs: DEFAULT_TIMEOUT_MS });
    const want = typeof row.want === "function" ? row.want(row.run, now) : row.want;
    assert.deepEqual(got, want, row.name);
    assert.deepEqual(row.run, before, `${row.name}: the run is not mutated`);
  }
});

test("decideTask: started with its first step → invoke carries on without another start", () => {
  const fresh = mkRun({ status: undefined });
  const world = { now: T0 + 2000, defaultTimeoutMs: DEFAULT_TIMEOUT_MS };
  const first = decideTask(fresh, mkTask(), world);
  assert.equal(first.type, "invoke");
  if (first.type !== "invoke" || !first.run || !first.base)
    return assert.fail("the first decision starts the run");
  assert.equal(first.base.startTime, at(2000));
  // what the controller writes: the start, under the author's step
  const step = applyStep(first.run, { type: "running" }, world.now, first.remainingMs);
  const written = applied(fresh, { ...first.base, ...step.change });
  assert.equal(written.status?.startTime, at(2000));
  assert.equal(getCondition(written, "Succeeded")?.reason, "Running");
  const second = decideTask(written, mkTask(), { ...world, now: T0 + 2500 });
  assert.deepEqual(second, invoke({ startedAt: T0 + 3000, remainingMs: DEFAULT_TIMEOUT_MS + 500 }));
});

test("attemptStart: whole seconds count from the end of the second, a fraction from its instant", () => {
  assert.equal(attemptStart("2026-01-01T00:00:00Z"), T0 + 1000);
  assert.equal(attemptStart("2026-01-01T00:00:07Z"), T0 + 8000);
  assert.equal(attemptStart(FRACTIONAL), T0 + 123);
  assert.equal(attemptStart("2026-01-01T00:00:00.000Z"), T0, "an explicit fraction is exact, even .000");
  assert.equal(attemptStart("2026-01-01T00:00:00.5Z"), T0 + 500);
});

test("servesRun and the helpers' edge cases", () => {
  const view = { target: { apiVersion: "/v1", kind: "Wait" } } as Parameters<typeof servesRun>[1];
  assert.equal(servesRun(mkTask(), view), false, "an empty group is nobody's");
  assert.deepEqual(runTimeoutMs(mkRun({ timeout: " 2m " }), 1), { ok: true, ms: 120_000 });
  const notString = mkRun();
  (notString.spec as Record<string, unknown>).timeout = 30;
  assert.deepEqual(runTimeoutMs(notString, 1), {
    ok: false,
    message: "spec.timeout must be a duration string",
  });
  assert.equal(cancelMessage(mkRun({ cancel: "" })), 'CustomRun "w" was cancelled');
});

interface StepRow {
  name: string;
  step: Step;
  remainingMs?: number;
  retries?: number;
  /** Earlier attempts already retried. */
  used?: number;
  want: (run: AnyRun, now: number) => unknown;
}

const runningWith =
  (requeueAfterMs: number | undefined, message = "", extra?: Record<string, unknown>) =>
  (run: AnyRun, now: number) => ({ change: markRunning(run, now, message, extra), requeueAfterMs });

const STEP_ROWS: StepRow[] = [
  {
    name: "running: the author's time when first",
    step: { type: "running", requeueAfterMs: 5000 },
    remainingMs: 10_000,
    want: runningWith(5000),
  },
  {
    name: "running: just past the timeout when first",
    step: { type: "running", requeueAfterMs: 20_000 },
    remainingMs: 10_000,
    want: runningWith(10_001),
  },
  {
    name: "running: the timeout alone",
    step: { type: "running" },
    remainingMs: 10_000,
    want: runningWith(10_001),
  },
  { name: "running: the timeout reached", step: { type: "running" }, remainingMs: 0, want: runningWith(1) },
  {
    name: "running: no timeout, the author's time",
    step: { type: "running", requeueAfterMs: 5000 },
    want: runningWith(5000),
  },
  { name: "running: nothing to wake for", step: { type: "running" }, want: runningWith(undefined) },
  {
    name: "running: a negative time is at once",
    step: { type: "running", requeueAfterMs: -5 },
    want: runningWith(0),
  },
  {
    name: "running: message and extraFields",
    step: { type: "running", message: "waiting", extraFields: { left: "2s" } },
    want: runningWith(undefined, "waiting", { left: "2s" }),
  },
  {
    name: "succeeded with the author's reason and results",
    step: {
      type: "succeeded",
      reason: "DurationElapsed",
      message: "done",
      results: [{ name: "r", value: "v" }],
    },
    want: (run, now) => ({
      change: markSucceeded(run, now, {
        reason: "DurationElapsed",
        message: "done",
        results: [{ name: "r", value: "v" }],
      }),
      event: { type: "Normal", reason: "DurationElapsed", message: "done" },
    }),
  },
  {
    name: "succeeded plainly",
    step: { type: "succeeded" },
    want: (run, now) => ({
      change: markSucceeded(run, now),
      event: { type: "Normal", reason: "Succeeded", message: "" },
    }),
  },
  {
    name: "failed, not retryable, with retries left: fails now",
    step: { type: "failed", reason: "InvalidDuration", message: "bad", retryable: false },
    retries: 3,
    want: (run, now) => ({
      change: markFailed(run, now, "InvalidDuration", "bad"),
      event: { type: "Warning", reason: "InvalidDuration", message: "bad" },
    }),
  },
  {
    name: "failed with retries left: retried at once",
    step: { type: "failed", reason: "Flaky", message: "try again" },
    retries: 2,
    used: 1,
    want: (run, now) => ({
      change: retry(run, now, "Flaky", "try again"),
      requeueAfterMs: 0,
      event: { type: "Warning", reason: "Flaky", message: "attempt 2 failed, retrying: try again" },
    }),
  },
  {
    name: "failed, explicitly retryable, retries exhausted",
    step: { type: "failed", reason: "Flaky", message: "again", retryable: true },
    retries: 2,
    used: 2,
    want: (run, now) => ({
      change: markFailed(run, now, "Flaky", "again"),
      event: { type: "Warning", reason: "Flaky", message: "again" },
    }),
  },
];

test("applyStep", () => {
  const now = T0 + 10_000;
  for (const row of STEP_ROWS) {
    const earlier: RunStatus[] = Array.from({ length: row.used ?? 0 }, () => ({
      conditions: [{ type: "Succeeded", status: "False", reason: "Flaky" }],
    }));
    const run = mkRun({
      ...(row.retries === undefined ? {} : { retries: row.retries }),
      status: {
        startTime: at(0),
        conditions: [running(0)],
        ...(earlier.length ? { retriesStatus: earlier } : {}),
      },
    });
    assert.deepEqual(applyStep(run, row.step, now, row.remainingMs), row.want(run, now), row.name);
  }
});

test("applyStep: the task's childReferences are written whole with any step", () => {
  const children = [
    { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "pipe-1" },
  ];
  const run = mkRun({ retries: 1, status: { startTime: at(0), conditions: [running(0)] } });
  const steps: Step[] = [
    { type: "running", childReferences: children },
    { type: "succeeded", childReferences: children },
    { type: "failed", reason: "Flaky", message: "x", childReferences: children },
    { type: "failed", reason: "Bad", message: "x", retryable: false, childReferences: children },
  ];
  for (const step of steps) {
    const { change } = applyStep(run, step, T0 + 1000, undefined);
    assert.deepEqual(change.childReferences, children, `${step.type}`);
  }
  const { change } = applyStep(run, { type: "running" }, T0 + 1000, undefined);
  assert.equal("childReferences" in change, false, "untouched when the task gives none");
});

test("a run is never False before its retries are used up: failures from the author", () => {
  for (const retries of [0, 1, 3]) {
    let run = mkRun({ retries });
    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      const write = applyStep(
        run,
        { type: "failed", reason: "Flaky", message: `#${attempt}` },
        T0 + attempt * 1000,
        undefined,
      );
      run = applied(run, write.change);
      const status = getCondition(run, "Succeeded")?.status;
      if (attempt <= retries) {
        assert.equal(status, "Unknown", `retries ${retries}, attempt ${attempt}`);
        assert.equal(write.requeueAfterMs, 0);
      } else assert.equal(status, "False", `retries ${retries}, last attempt`);
    }
    assert.equal(retriesUsed(run), retries);
    assert.equal(getCondition(run, "Succeeded")?.message, `#${retries + 1}`);
  }
});

test("a run is never False before its retries are used up: timeouts", () => {
  const task = mkTask();
  for (const retries of [0, 2]) {
    let run = mkRun({ retries, timeout: "10s" });
    let now = T0;
    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      // each attempt runs until past its own timeout, counted from its own start: startTime is
      // written in whole seconds (the apiserver's resolution) and counted from the end of its
      // second, so an attempt stamped S is within 10s until S + 11s and past it 1ms later
      const stamp = Date.parse(run.status?.startTime ?? "");
      const inTime = decideTask(run, task, { now: stamp + 11_000, defaultTimeoutMs: DEFAULT_TIMEOUT_MS });
      assert.equal(inTime.type, "invoke", `retries ${retries}, attempt ${attempt} within its timeout`);
      now = stamp + 11_001;
      const decision = decideTask(run, task, { now, defaultTimeoutMs: DEFAULT_TIMEOUT_MS });
      assert.equal(decision.type, "write");
      if (decision.type !== "write") return;
      assert.equal(decision.write.stop, "timedOut");
      run = applied(run, decision.write.change);
      const cond = getCondition(run, "Succeeded");
      if (attempt <= retries) {
        assert.equal(cond?.status, "Unknown", `retries ${retries}, attempt ${attempt}`);
        assert.equal(run.status?.startTime, at(now - T0));
        assert.equal(run.status?.completionTime, undefined);
      } else {
        assert.equal(cond?.status, "False");
        assert.equal(cond?.reason, "CustomRunTimedOut");
      }
    }
    assert.equal(retriesUsed(run), retries);
    assert.equal(decideTask(run, task, { now: now + 1, defaultTimeoutMs: DEFAULT_TIMEOUT_MS }).type, "skip");
  }
});
