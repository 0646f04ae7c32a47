// The status transitions: what each mark* writes for a Run and a CustomRun,
// when lastTransitionTime moves, and what a retry keeps of the failed attempt.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun, Condition, RunStatus } from "@quarry/api";
import {
  canRetry,
  markCancelled,
  markFailed,
  markRunning,
  markStarted,
  markSucceeded,
  markTimedOut,
  retriesUsed,
  retry,
  type StatusChange,
} from "./status.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

const FLAVOURS = ["Run", "CustomRun"] as const;
type Flavour = (typeof FLAVOURS)[number];

function run(kind: Flavour, status?: RunStatus, retries?: number): AnyRun {
  const metadata = { name: "w", namespace: "ns", uid: "u-1" };
  const target = { apiVersion: "wait.testing.tekton.dev/v1beta1", kind: "Wait" };
  const common = retries === undefined ? {} : { retries };
  const r: AnyRun =
    kind === "Run"
      ? { apiVersion: "tekton.dev/v1alpha1", kind, metadata, spec: { ref: target, ...common } }
      : { apiVersion: "tekton.dev/v1beta1", kind, metadata, spec: { customRef: target, ...common } };
  if (status) r.status = status;
  return r;
}

function succeeded(status: Condition["status"], reason: string, since: number, message?: string): Condition {
  const c: Condition = { type: "Succeeded", status, reason, lastTransitionTime: at(since) };
  if (message) c.message = message;
  return c;
}

const running = (since = 0, message?: string) => succeeded("Unknown", "Running", since, message);

test("markStarted sets startTime once and Succeeded Unknown/Started", () => {
  for (const kind of FLAVOURS) {
    assert.deepEqual(markStarted(run(kind), T0 + 5000), {
      startTime: at(5),
      conditions: [succeeded("Unknown", "Started", 5)],
    });
    // a run that already has a startTime keeps it (an informer lagging behind its own write)
    assert.deepEqual(markStarted(run(kind, { startTime: at(1) }), T0 + 5000, "hello"), {
      startTime: at(1),
      conditions: [succeeded("Unknown", "Started", 5, "hello")],
    });
  }
});

test("markRunning writes Unknown/Running and extraFields only when given", () => {
  const r = run("CustomRun", { startTime: at(0), conditions: [succeeded("Unknown", "Started", 0)] });
  assert.deepEqual(markRunning(r, T0 + 2000), { conditions: [running(2)] });
  assert.deepEqual(markRunning(r, T0 + 2000, "waiting", { left: "3s" }), {
    conditions: [running(2, "waiting")],
    extraFields: { left: "3s" },
  });
});

test("markSucceeded: True with Succeeded or the author's reason, completionTime, results only when any", () => {
  const r = run("Run", { startTime: at(0), conditions: [running(0)] });
  assert.deepEqual(markSucceeded(r, T0 + 9000), {
    conditions: [succeeded("True", "Succeeded", 9)],
    completionTime: at(9),
  });
  assert.deepEqual(markSucceeded(r, T0 + 9000, { results: [] }), {
    conditions: [succeeded("True", "Succeeded", 9)],
    completionTime: at(9),
  });
  assert.deepEqual(
    markSucceeded(r, T0 + 9000, {
      reason: "DurationElapsed",
      message: "done",
      results: [{ name: "waited", value: "9s" }],
    }),
    {
      conditions: [succeeded("True", "DurationElapsed", 9, "done")],
      completionTime: at(9),
      results: [{ name: "waited", value: "9s" }],
    },
  );
});

test("markFailed, markCancelled and markTimedOut use each flavour's reasons", () => {
  const rows: { kind: Flavour; mark: (r: AnyRun) => StatusChange; reason: string }[] = [
    { kind: "Run", mark: (r) => markFailed(r, T0 + 3000, "Boom", "m"), reason: "Boom" },
    { kind: "CustomRun", mark: (r) => markFailed(r, T0 + 3000, "Boom", "m"), reason: "Boom" },
    { kind: "Run", mark: (r) => markCancelled(r, T0 + 3000, "m"), reason: "RunCancelled" },
    { kind: "CustomRun", mark: (r) => markCancelled(r, T0 + 3000, "m"), reason: "CustomRunCancelled" },
    { kind: "Run", mark: (r) => markTimedOut(r, T0 + 3000, "m"), reason: "RunTimedOut" },
    { kind: "CustomRun", mark: (r) => markTimedOut(r, T0 + 3000, "m"), reason: "CustomRunTimedOut" },
  ];
  for (const row of rows) {
    const r = run(row.kind, { startTime: at(0), conditions: [running(0)] });
    assert.deepEqual(
      row.mark(r),
      { conditions: [succeeded("False", row.reason, 3, "m")], completionTime: at(3) },
      `${row.kind} ${row.reason}`,
    );
  }
});

test("lastTransitionTime is kept while status and reason stay, and moves when either changes", () => {
  const rows: { name: string; current: Condition; change: (r: AnyRun) => StatusChange; since: number }[] = [
    {
      name: "same status and reason, new message",
      current: running(1, "old"),
      change: (r) => markRunning(r, T0 + 7000, "new"),
      since: 1,
    },
    {
      name: "reason changes (Started → Running)",
      current: succeeded("Unknown", "Started", 1),
      change: (r) => markRunning(r, T0 + 7000, "new"),
      since: 7,
    },
    {
      name: "status changes (Unknown → False)",
      current: succeeded("Unknown", "Boom", 1),
      change: (r) => markFailed(r, T0 + 7000, "Boom", "new"),
      since: 7,
    },
    {
      name: "a condition without lastTransitionTime gets one",
      current: { type: "Succeeded", status: "Unknown", reason: "Running" },
      change: (r) => markRunning(r, T0 + 7000, "new"),
      since: 7,
    },
  ];
  for (const row of rows) {
    const r = run("CustomRun", { startTime: at(0), conditions: [row.current] });
    const cond = row.change(r).conditions?.find((c) => c.type === "Succeeded");
    assert.equal(cond?.lastTransitionTime, at(row.since), row.name);
    assert.equal(cond?.message, "new", row.name);
  }
});

test("conditions of other types are kept, Succeeded is replaced, and the run is not mutated", () => {
  const other: Condition = { type: "Ready", status: "True", reason: "Other", lastTransitionTime: at(0) };
  const status: RunStatus = { startTime: at(0), conditions: [running(0), other] };
  const r = run("Run", status);
  const before = structuredClone(r);
  assert.deepEqual(markSucceeded(r, T0 + 4000).conditions, [other, succeeded("True", "Succeeded", 4)]);
  assert.deepEqual(markStarted(run("Run", { conditions: [other] }), T0).conditions, [
    other,
    succeeded("Unknown", "Started", 0),
  ]);
  assert.deepEqual(r, before);
});

test("retry appends the failed attempt and starts the next one", () => {
  const r = run(
    "CustomRun",
    {
      startTime: at(0),
      conditions: [running(1, "waiting")],
      results: [{ name: "partial", value: "x" }],
      extraFields: { step: "2" },
      observedGeneration: 1,
      childReferences: [
        { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "rr" },
      ],
      provenance: { refSource: { uri: "git://x", digest: { sha1: "abc" } } },
    },
    2,
  );
  assert.deepEqual(retry(r, T0 + 30_000, "CustomRunTimedOut", "too slow"), {
    retriesStatus: [
      {
        // the attempt as it was, ended: no nested retriesStatus, childReferences or provenance
        startTime: at(0),
        conditions: [succeeded("False", "CustomRunTimedOut", 30, "too slow")],
        completionTime: at(30),
        results: [{ name: "partial", value: "x" }],
        extraFields: { step: "2" },
        observedGeneration: 1,
      },
    ],
    startTime: at(30),
    completionTime: null,
    results: null,
    // still Unknown/Running, so the transition time stays; the message names the attempt
    conditions: [running(1, "attempt 2 of 3 after CustomRunTimedOut: too slow")],
  });
});

test("a second retry appends to retriesStatus without nesting it", () => {
  const first: RunStatus = {
    startTime: at(0),
    completionTime: at(10),
    conditions: [succeeded("False", "Boom", 10, "first")],
  };
  const r = run(
    "Run",
    {
      startTime: at(10),
      conditions: [running(10, "attempt 2 of 3 after Boom: first")],
      retriesStatus: [first],
    },
    2,
  );
  assert.equal(retriesUsed(r), 1);
  assert.equal(canRetry(r), true);
  const change = retry(r, T0 + 20_000, "Boom", "second");
  assert.deepEqual(change.retriesStatus, [
    first,
    {
      startTime: at(10),
      completionTime: at(20),
      conditions: [succeeded("False", "Boom", 20, "second")],
    },
  ]);
  assert.equal(change.startTime, at(20));
  assert.equal(change.conditions?.[0]?.message, "attempt 3 of 3 after Boom: second");
});

test("canRetry: retries left while fewer attempts were retried than spec.retries", () => {
  const failed = (n: number) =>
    Array.from({ length: n }, (): RunStatus => ({ conditions: [succeeded("False", "Boom", 0)] }));
  const rows: { retries?: number; used: number; want: boolean }[] = [
    { used: 0, want: false },
    { retries: 0, used: 0, want: false },
    { retries: -1, used: 0, want: false },
    { retries: 1, used: 0, want: true },
    { retries: 1, used: 1, want: false },
    { retries: 3, used: 2, want: true },
    { retries: 3, used: 3, want: false },
  ];
  for (const row of rows) {
    const r = run("CustomRun", { retriesStatus: failed(row.used) }, row.retries);
    assert.equal(retriesUsed(r), row.used);
    assert.equal(canRetry(r), row.want, `retries ${row.retries} used ${row.used}`);
  }
});
