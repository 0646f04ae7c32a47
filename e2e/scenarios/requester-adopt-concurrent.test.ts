// Many callers racing for one request: one creates it, the others adopt it;
// optimistic locking on the ownerReferences list means no owner is lost.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference } from "@quarry/api";
import { getRequest, useScenario } from "@quarry/harness/scenario";
import { configMaps, type KubeObject } from "@quarry/kube";
import { requestResolution } from "@quarry/requester";

const scenario = useScenario("rq-race");

test("concurrent create-or-adopt: exactly one controller, every owner recorded", async () => {
  const scn = scenario();
  const owners: OwnerReference[] = [];
  for (let i = 0; i < 5; i++) {
    const name = `owner-${i}`;
    const cm = await scn.admin.create<KubeObject>(configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: scn.namespace },
    });
    owners.push({ apiVersion: "v1", kind: "ConfigMap", name, uid: cm.metadata.uid! });
  }
  const params = [{ name: "name", value: "shared" }];
  const results = await Promise.all(
    owners.map((owner) =>
      requestResolution(scn.admin, {
        namespace: scn.namespace,
        resolverType: "cluster",
        params,
        owner,
        baseName: "shared",
      }),
    ),
  );
  const name = results[0]!.metadata.name!;
  assert.ok(results.every((r) => r.metadata.name === name));
  const refs = (await getRequest(scn.admin, scn.namespace, name)).metadata.ownerReferences ?? [];
  assert.deepEqual(refs.map((r) => r.uid).sort(), owners.map((o) => o.uid).sort());
  assert.equal(refs.filter((r) => r.controller).length, 1);
});
