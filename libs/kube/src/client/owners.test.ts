import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference } from "@quarry/api";
import { createLogger } from "@quarry/observability";
import { Controller } from "../queue/controller.ts";
import type { KubeObject } from "./client.ts";
import { controllerOwnerKey } from "./owners.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });

const ref = (
  kind: string,
  name: string,
  apiVersion = "tekton.dev/v1",
  controller = true,
): OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid: `uid-${name}`,
  controller,
});

const child = (name: string, owners: OwnerReference[], namespace = "ns"): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: namespace || undefined, resourceVersion: "1", ownerReferences: owners },
});

/** A controller that never runs workers: the test reads what was queued. */
function newController(): Controller {
  return new Controller({ name: "t", log, reconciler: { reconcile: async () => undefined } });
}

async function queued(c: Controller): Promise<string[]> {
  const out: string[] = [];
  while (c.queue.depth() > 0) {
    const key = await c.queue.get();
    if (key === undefined) break;
    out.push(key);
    c.queue.done(key);
  }
  return out;
}

test("controllerOwnerKey picks the controller reference of the wanted kind, group or apiVersion", () => {
  const pod = child("p", [ref("TaskRun", "other", "tekton.dev/v1", false), ref("TaskRun", "run")]);
  assert.equal(controllerOwnerKey(pod, { ownerKind: "TaskRun" }), "ns/run");
  assert.equal(controllerOwnerKey(pod, { ownerKind: "TaskRun", ownerGroup: "tekton.dev" }), "ns/run");
  assert.equal(controllerOwnerKey(pod, { ownerKind: "TaskRun", ownerApiVersion: "tekton.dev/v1" }), "ns/run");
  assert.equal(
    controllerOwnerKey(pod, { ownerKind: "TaskRun", ownerApiVersion: "tekton.dev/v1beta1" }),
    undefined,
  );
  assert.equal(controllerOwnerKey(pod, { ownerKind: "TaskRun", ownerGroup: "example.com" }), undefined);
  assert.equal(controllerOwnerKey(pod, { ownerKind: "PipelineRun" }), undefined);
  // the core group is ""; a cluster-scoped child names its owner without a namespace
  const rs = child("r", [ref("ReplicationController", "rc", "v1")]);
  assert.equal(controllerOwnerKey(rs, { ownerKind: "ReplicationController", ownerGroup: "" }), "ns/rc");
  // only a non-controller owner of the right kind: ignored
  assert.equal(
    controllerOwnerKey(child("q", [ref("TaskRun", "x", "tekton.dev/v1", false)]), { ownerKind: "TaskRun" }),
    undefined,
  );
  assert.equal(controllerOwnerKey(child("c", [ref("TaskRun", "run")], ""), { ownerKind: "TaskRun" }), "run");
});

test("ownerHandlers enqueue the controller owner on add, update, delete and resync", async () => {
  const c = newController();
  const h = c.ownerHandlers<KubeObject>({ ownerKind: "TaskRun", ownerGroup: "tekton.dev" });
  h.onResync?.(child("c", [ref("TaskRun", "run-c")]));
  h.onAdd?.(child("a", [ref("TaskRun", "run-a")]));
  h.onDelete?.(child("b", [ref("TaskRun", "run-b")]));
  // children without a matching controller owner are ignored
  h.onAdd?.(child("d", []));
  h.onAdd?.(child("e", [ref("TaskRun", "run-e", "tekton.dev/v1", false)]));
  h.onAdd?.(child("f", [ref("TaskRun", "run-f", "other.io/v1")]));
  h.onAdd?.(child("g", [ref("PipelineRun", "pr")]));
  assert.deepEqual(
    await queued(c),
    ["ns/run-a", "ns/run-b", "ns/run-c"],
    "the resync waits in the slow lane behind fresh events",
  );

  // an update that moves the child to another owner wakes both; the same owner once
  h.onUpdate?.(child("a", [ref("TaskRun", "old")]), child("a", [ref("TaskRun", "new")]));
  h.onUpdate?.(child("a", [ref("TaskRun", "same")]), child("a", [ref("TaskRun", "same")]));
  h.onUpdate?.(child("a", [ref("TaskRun", "gone")]), child("a", []));
  assert.deepEqual(await queued(c), ["ns/old", "ns/new", "ns/same", "ns/gone"]);
});
