import assert from "node:assert/strict";
import { test } from "node:test";
import { getCondition, isDone, rfc3339Seconds, setCondition } from "./conditions.ts";
import type { Condition, ResolutionRequest } from "./types.ts";

function rr(conditions?: Condition[]): ResolutionRequest {
  const obj: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns" },
    spec: {},
  };
  if (conditions) obj.status = { conditions };
  return obj;
}

test("getCondition finds by type on an object or on its status", () => {
  const c: Condition = { type: "Succeeded", status: "Unknown", reason: "ResolutionInProgress" };
  const obj = rr([{ type: "Other", status: "True" }, c]);
  assert.equal(getCondition(obj, "Succeeded"), c);
  assert.equal(getCondition(obj.status, "Succeeded"), c);
  assert.equal(getCondition(obj, "Missing"), undefined);
  assert.equal(getCondition(rr(), "Succeeded"), undefined);
  assert.equal(getCondition(undefined, "Succeeded"), undefined);
});

test("isDone: Succeeded True or False", () => {
  assert.equal(isDone(rr([{ type: "Succeeded", status: "True" }])), true);
  assert.equal(isDone(rr([{ type: "Succeeded", status: "False" }])), true);
  assert.equal(isDone(rr([{ type: "Succeeded", status: "Unknown" }])), false);
  assert.equal(isDone(rr([{ type: "Other", status: "True" }])), false);
  assert.equal(isDone(rr()), false);
  assert.equal(isDone(rr([{ type: "Succeeded", status: "False" }]).status), true);
});

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const ok = (status: Condition["status"], reason: string, since?: number, message?: string): Condition => ({
  type: "Succeeded",
  status,
  reason,
  ...(message === undefined ? {} : { message }),
  ...(since === undefined ? {} : { lastTransitionTime: at(since) }),
});
const ready: Condition = { type: "Ready", status: "True", reason: "Other", lastTransitionTime: at(0) };
const other: Condition = { type: "Other", status: "False", lastTransitionTime: at(0) };

test("setCondition replaces by type and moves lastTransitionTime when the status or the reason changes", () => {
  const rows: { name: string; given: Condition[] | undefined; next: Condition; want: Condition[] }[] = [
    {
      name: "no conditions yet",
      given: undefined,
      next: ok("Unknown", "Started"),
      want: [ok("Unknown", "Started", 9)],
    },
    { name: "empty list", given: [], next: ok("True", "Done"), want: [ok("True", "Done", 9)] },
    {
      name: "same status, new message: time kept",
      given: [ok("Unknown", "Running", 1, "old")],
      next: ok("Unknown", "Running", undefined, "new"),
      want: [ok("Unknown", "Running", 1, "new")],
    },
    {
      name: "same status, new reason: time is now (Started to Running is a transition)",
      given: [ok("Unknown", "Started", 1)],
      next: ok("Unknown", "Running"),
      want: [ok("Unknown", "Running", 9)],
    },
    {
      name: "status changes: time is now",
      given: [ok("Unknown", "Running", 1)],
      next: ok("False", "Boom", undefined, "m"),
      want: [ok("False", "Boom", 9, "m")],
    },
    {
      name: "same status but the old one has no time: now",
      given: [ok("Unknown", "Running")],
      next: ok("Unknown", "Running"),
      want: [ok("Unknown", "Running", 9)],
    },
    {
      name: "a time on next is not trusted",
      given: [ok("Unknown", "Running", 1)],
      next: ok("True", "Done", 5),
      want: [ok("True", "Done", 9)],
    },
    {
      name: "the others kept in order, the written one last",
      given: [ready, ok("Unknown", "Running", 1), other],
      next: ok("True", "Done"),
      want: [ready, other, ok("True", "Done", 9)],
    },
    {
      name: "a new type is appended",
      given: [ready, other],
      next: ok("Unknown", "Started"),
      want: [ready, other, ok("Unknown", "Started", 9)],
    },
    {
      name: "a duplicate of the type is dropped, the first one decides the time",
      given: [ok("Unknown", "Running", 1), ready, ok("False", "Stale", 2)],
      next: ok("Unknown", "Running", undefined, "m"),
      want: [ready, ok("Unknown", "Running", 1, "m")],
    },
  ];
  for (const row of rows) {
    const before = structuredClone(row.given);
    assert.deepEqual(setCondition(row.given, row.next, T0 + 9000), row.want, row.name);
    assert.deepEqual(setCondition(row.given, row.next, new Date(T0 + 9000)), row.want, `${row.name} (Date)`);
    assert.deepEqual(row.given, before, `${row.name}: input not mutated`);
  }
});

test("rfc3339Seconds drops the milliseconds, as the apiserver writes times", () => {
  assert.equal(rfc3339Seconds(T0 + 1234), "2026-01-01T00:00:01Z");
  assert.equal(rfc3339Seconds(new Date(T0)), "2026-01-01T00:00:00Z");
});
