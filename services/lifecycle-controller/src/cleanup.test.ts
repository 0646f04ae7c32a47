import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference, ResolutionRequest } from "@quarry/api";
import { type CleanupDecision, decideCleanup, OWNER_RECHECK_MS, type OwnerState } from "./cleanup.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const TTL = 60 * 60_000;
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const taskRun: OwnerReference = {
  apiVersion: "tekton.dev/v1",
  kind: "TaskRun",
  name: "build",
  uid: "u1",
  controller: true,
};
const configMap: OwnerReference = { apiVersion: "v1", kind: "ConfigMap", name: "cm", uid: "u2" };

function rr(
  status: "True" | "False" | "Unknown" | undefined,
  completedMs: number,
  owners?: OwnerReference[],
) {
  const r: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: {
      name: "r",
      namespace: "ns",
      creationTimestamp: iso(0),
      ...(owners ? { ownerReferences: owners } : {}),
    },
    spec: { params: [] },
  };
  if (status)
    r.status = { conditions: [{ type: "Succeeded", status, lastTransitionTime: iso(completedMs) }] };
  return r;
}

const cases: [string, ResolutionRequest, number, number, OwnerState | undefined, CleanupDecision][] = [
  ["in progress: kept", rr("Unknown", 0), TTL * 2, TTL, undefined, { kind: "keep" }],
  ["no status: kept", rr(undefined, 0), TTL * 2, TTL, undefined, { kind: "keep" }],
  ["ttl 0: never deleted", rr("True", 0), TTL * 100, 0, undefined, { kind: "keep" }],
  [
    "resolved, before its ttl: wait for the rest",
    rr("True", 1000),
    1000 + 10_000,
    TTL,
    undefined,
    { kind: "wait", afterMs: TTL - 10_000 },
  ],
  [
    "resolved, ttl counted from completion, not creation",
    rr("True", TTL),
    TTL + 1,
    TTL,
    undefined,
    { kind: "wait", afterMs: TTL - 1 },
  ],
  [
    "resolved, ttl passed, no owner: deleted",
    rr("True", 0),
    TTL,
    TTL,
    undefined,
    { kind: "delete", why: "completed, no owner" },
  ],
  [
    "failed, ttl passed, no owner: deleted",
    rr("False", 0),
    TTL + 5,
    TTL,
    undefined,
    { kind: "delete", why: "completed, no owner" },
  ],
  [
    "owned by a run: its owner is looked up",
    rr("True", 0, [taskRun]),
    TTL,
    TTL,
    undefined,
    { kind: "check-owner", owner: taskRun },
  ],
  [
    "owner done: deleted",
    rr("True", 0, [taskRun]),
    TTL,
    TTL,
    "done",
    { kind: "delete", why: "completed, owner TaskRun build is done" },
  ],
  [
    "owner gone: deleted",
    rr("True", 0, [taskRun]),
    TTL,
    TTL,
    "gone",
    { kind: "delete", why: "completed, owner TaskRun build is gone" },
  ],
  [
    "owner still running (may not have read it): wait",
    rr("True", 0, [taskRun]),
    TTL,
    TTL,
    "running",
    { kind: "wait", afterMs: OWNER_RECHECK_MS },
  ],
  [
    "owner running, short ttl: rechecked after the ttl",
    rr("True", 0, [taskRun]),
    20_000,
    10_000,
    "running",
    { kind: "wait", afterMs: 10_000 },
  ],
  [
    "owner unreadable (RBAC): kept, rechecked",
    rr("True", 0, [taskRun]),
    TTL,
    TTL,
    "unreadable",
    { kind: "wait", afterMs: OWNER_RECHECK_MS },
  ],
  [
    "owner of a kind Quarry cannot read: left to the garbage collector",
    rr("True", 0, [configMap]),
    TTL * 10,
    TTL,
    undefined,
    { kind: "keep" },
  ],
];

for (const [name, request, nowOffset, ttlMs, owner, want] of cases) {
  test(`decideCleanup: ${name}`, () => {
    assert.deepEqual(decideCleanup(request, { now: T0 + nowOffset, ttlMs }, owner), want);
  });
}

test("decideCleanup: a request already being deleted is left alone", () => {
  const r = rr("True", 0);
  r.metadata.deletionTimestamp = iso(1);
  assert.deepEqual(decideCleanup(r, { now: T0 + TTL * 2, ttlMs: TTL }), { kind: "keep" });
});
