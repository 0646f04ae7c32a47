// Several resolvers on one controller: which reconciler a key reaches, and
// which sets of types may share a process.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { MapLister, type ReconcileContext } from "@quarry/kube";
import { reconcileContext } from "@quarry/kube/testing";
import { checkDistinctTypes, RoutingReconciler } from "./routing.ts";

const request = (name: string, type: string): ResolutionRequest => ({
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: { name, namespace: "ns", labels: { "resolution.tekton.dev/type": type } },
  spec: { params: [] },
});

function recorder(seen: string[], label: string, requeueAfterMs?: number) {
  return {
    reconcile: async (key: string, ctx: ReconcileContext) => {
      seen.push(`${label} ${key} ${ctx.attempt}`);
      return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
    },
  };
}

test("a key goes to the resolver whose cache holds the request, with its outcome; an unknown key is done", async () => {
  const seen: string[] = [];
  const routing = new RoutingReconciler([
    { requests: new MapLister([request("g", "git")]), reconciler: recorder(seen, "git") },
    { requests: new MapLister([request("p", "pipe")]), reconciler: recorder(seen, "pipe", 45_000) },
  ]);
  assert.equal(await routing.reconcile("ns/g", reconcileContext({ attempt: 1 })), undefined);
  assert.deepEqual(await routing.reconcile("ns/p", reconcileContext({ attempt: 3 })), {
    requeueAfterMs: 45_000,
  });
  assert.equal(await routing.reconcile("ns/gone", reconcileContext({ attempt: 1 })), undefined);
  assert.deepEqual(seen, ["git ns/g 1", "pipe ns/p 3"]);
});

test("types and aliases may not overlap between hosted resolvers", () => {
  checkDistinctTypes([{ type: "git" }, { type: "pipe" }, { type: "bundles", aliases: ["bundle"] }]);
  checkDistinctTypes([{ type: "cluster", aliases: ["cluster", "in-cluster"] }]);
  assert.throws(
    () => checkDistinctTypes([{ type: "git" }, { type: "git" }]),
    /"git" is served by both git and git/,
  );
  assert.throws(
    () => checkDistinctTypes([{ type: "bundles", aliases: ["bundle"] }, { type: "bundle" }]),
    /"bundle" is served by both bundles and bundle/,
  );
});
