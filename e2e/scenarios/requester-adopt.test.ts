// A second caller asking for the same thing under the same base name adopts
// the existing request: it is added as an extra, non-controller owner (so the
// request lives until every owner is gone) and the first owner stays the
// controller. Asking again is a no-op.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference } from "@quarry/api";
import { getRequest, useScenario } from "@quarry/harness/scenario";
import { configMaps, type KubeClient, type KubeObject } from "@quarry/kube";
import { requestResolution } from "@quarry/requester";

const scenario = useScenario("rq-adopt");

async function owner(client: KubeClient, namespace: string, name: string): Promise<OwnerReference> {
  const cm = await client.create<KubeObject>(configMaps, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
  });
  return { apiVersion: "v1", kind: "ConfigMap", name, uid: cm.metadata.uid! };
}

test("adopt: extra non-controller owner, controller unchanged, repeat is a no-op", async () => {
  const scn = scenario();
  const a = await owner(scn.admin, scn.namespace, "owner-a");
  const b = await owner(scn.admin, scn.namespace, "owner-b");
  const params = [
    { name: "bundle", value: "registry.example.com/tasks:v1" },
    { name: "name", value: "build" },
    { name: "kind", value: "task" },
  ];
  const ask = { namespace: scn.namespace, resolverType: "bundles", baseName: "owner-a" };
  const first = await requestResolution(scn.admin, { ...ask, params, owner: a });
  // same ask, params in another order: the name hash sorts them, so it is the same request
  const second = await requestResolution(scn.admin, { ...ask, params: [...params].reverse(), owner: b });
  assert.equal(second.metadata.name, first.metadata.name);
  assert.equal(second.metadata.uid, first.metadata.uid);
  assert.deepEqual(second.metadata.ownerReferences, [
    { ...a, controller: true, blockOwnerDeletion: true },
    b,
  ]);

  const again = await requestResolution(scn.admin, { ...ask, params, owner: b });
  assert.equal(again.metadata.resourceVersion, second.metadata.resourceVersion);
  const stored = await getRequest(scn.admin, scn.namespace, first.metadata.name!);
  assert.deepEqual(stored.metadata.ownerReferences, second.metadata.ownerReferences);
  assert.deepEqual(stored.spec.params, params); // the creator's spec is kept as written
});
