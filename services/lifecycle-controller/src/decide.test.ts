import assert from "node:assert/strict";
import { test } from "node:test";
import type { Condition, ResolutionRequest } from "@quarry/api";
import { decide, MESSAGE_WAITING, type World } from "./decide.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const world = (elapsedMs: number, timeoutMs = 60_000): World => ({
  now: T0 + elapsedMs,
  config: { maxResolutionTimeoutMs: timeoutMs, completedRequestTtlMs: 3_600_000 },
});

function rr(labels: Record<string, string>, status?: ResolutionRequest["status"]): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: {
      name: "r",
      namespace: "ns",
      generation: 3,
      labels,
      creationTimestamp: new Date(T0).toISOString(),
    },
    spec: { params: [] },
    status,
  };
}

const git = { "resolution.tekton.dev/type": "git" };
const inProgress: Condition = {
  type: "Succeeded",
  status: "Unknown",
  reason: "ResolutionInProgress",
  message: MESSAGE_WAITING,
  lastTransitionTime: "2026-01-01T00:00:00Z",
};
const cond = (d: ReturnType<typeof decide>) => d.status?.conditions.find((c) => c.type === "Succeeded");

test("decide: table", () => {
  const cases: {
    name: string;
    obj: ResolutionRequest;
    world: World;
    status?: string;
    reason?: string;
    message?: string | RegExp;
    label?: string;
    requeue?: number;
    noWrite?: boolean;
    /** status.annotations["quarry.dev/reason"] written, when the controller ends the request itself. */
    quarryReason?: string;
    /** Annotations the write must keep (a resolver's). */
    keeps?: Record<string, string>;
  }[] = [
    {
      name: "new request is initialised",
      obj: rr(git),
      world: world(1000),
      status: "Unknown",
      reason: "ResolutionInProgress",
      message: MESSAGE_WAITING,
      requeue: 59_000,
    },
    {
      name: "initialised request only requeues",
      obj: rr(git, { conditions: [inProgress] }),
      world: world(10_000),
      noWrite: true,
      requeue: 50_000,
    },
    {
      name: "data set → True",
      obj: rr(git, { conditions: [inProgress], data: "eA==" }),
      world: world(5000),
      status: "True",
    },
    {
      name: "data set beats timeout",
      obj: rr(git, { conditions: [inProgress], data: "eA==" }),
      world: world(120_000),
      status: "True",
    },
    {
      name: "timeout, nobody answered",
      obj: rr(git, { conditions: [inProgress] }),
      world: world(60_000),
      status: "False",
      reason: "ResolutionTimedOut",
      message: "no resolver for type git answered within 1m0s",
      quarryReason: "NoResolver",
    },
    {
      name: "timeout after a resolver accepted",
      obj: rr(git, { conditions: [inProgress], annotations: { "quarry.dev/accepted-by": "x" } }),
      world: world(61_000),
      status: "False",
      reason: "ResolutionTimedOut",
      message: "resolution took longer than global timeout of 1m0s",
      quarryReason: "TimedOut",
      keeps: { "quarry.dev/accepted-by": "x" },
    },
    {
      name: "timeout after a resolver changed the message",
      obj: rr(git, { conditions: [{ ...inProgress, message: "fetching" }] }),
      world: world(61_000),
      message: "resolution took longer than global timeout of 1m0s",
      quarryReason: "TimedOut",
    },
    {
      name: "missing label fails at once",
      obj: rr({}),
      world: world(0),
      status: "False",
      reason: "ResolutionFailed",
      message: /resolution\.tekton\.dev\/type/,
      quarryReason: "MissingResolverLabel",
    },
    {
      name: "an empty resolver label is a missing one",
      obj: rr({ "resolution.tekton.dev/type": "" }),
      world: world(0),
      status: "False",
      reason: "ResolutionFailed",
      quarryReason: "MissingResolverLabel",
    },
    {
      name: "unknown resolver type times out with NoResolver",
      obj: rr({ "resolution.tekton.dev/type": "nonesuch" }, { conditions: [inProgress] }),
      world: world(60_000),
      status: "False",
      reason: "ResolutionTimedOut",
      message: "no resolver for type nonesuch answered within 1m0s",
      quarryReason: "NoResolver",
    },
    {
      name: "done (True) is left alone",
      obj: rr(git, { conditions: [{ type: "Succeeded", status: "True" }] }),
      world: world(999_999),
      noWrite: true,
    },
    {
      name: "done (False by resolver) is left alone",
      obj: rr(git, { conditions: [{ type: "Succeeded", status: "False", reason: "ResolutionFailed" }] }),
      world: world(999_999),
      noWrite: true,
    },
    {
      name: "alias label gets canonical label",
      obj: rr({ "resolution.tekton.dev/resolver": "in-cluster" }),
      world: world(0),
      label: "cluster",
      status: "Unknown",
      requeue: 60_000,
    },
    {
      name: "alias name in canonical label",
      obj: rr({ "resolution.tekton.dev/type": "bundle" }),
      world: world(0),
      label: "bundles",
      status: "Unknown",
      requeue: 60_000,
    },
    {
      name: "timeout message uses configured duration",
      obj: rr(git),
      world: world(2500, 2500),
      message: "no resolver for type git answered within 2.5s",
      quarryReason: "NoResolver",
    },
  ];
  for (const c of cases) {
    const d = decide(c.obj, c.world);
    if (c.noWrite) assert.equal(d.status, undefined, c.name);
    if (c.status) assert.equal(cond(d)?.status, c.status, c.name);
    if (c.reason) assert.equal(cond(d)?.reason, c.reason, c.name);
    if (typeof c.message === "string") assert.equal(cond(d)?.message, c.message, c.name);
    if (c.message instanceof RegExp) assert.match(cond(d)?.message ?? "", c.message, c.name);
    assert.equal(d.canonicalLabel, c.label, c.name);
    assert.equal(d.requeueAfterMs, c.requeue, c.name);
    if (d.status) assert.equal(d.status.observedGeneration, 3, c.name);
    assert.equal(d.status?.annotations?.["quarry.dev/reason"], c.quarryReason, c.name);
    for (const [k, v] of Object.entries(c.keeps ?? {})) assert.equal(d.status?.annotations?.[k], v, c.name);
  }
});

test("decide: lastTransitionTime kept when status unchanged, set when it flips", () => {
  const d = decide(rr(git, { conditions: [inProgress], data: "eA==" }), world(5000));
  assert.equal(cond(d)?.lastTransitionTime, "2026-01-01T00:00:05Z");
  const other: Condition = { type: "Other", status: "True" };
  const d2 = decide(rr(git, { conditions: [other, inProgress], data: "eA==" }), world(5000));
  assert.deepEqual(d2.status?.conditions[0], other, "other condition types are preserved");
});

test("decide: timeout events are Warnings", () => {
  const d = decide(rr(git, { conditions: [inProgress] }), world(60_000));
  assert.equal(d.event?.type, "Warning");
  assert.equal(d.event?.reason, "ResolutionTimedOut");
});
