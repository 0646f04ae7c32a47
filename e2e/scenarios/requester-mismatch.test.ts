// A request already under the deterministic name that asks for something else
// (a hash collision, or someone edited it) is refused, not adopted.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createRequest, getRequest, newRequest, useScenario } from "@quarry/harness/scenario";
import { configMaps, type KubeObject } from "@quarry/kube";
import { buildRequest, RequestMismatchError, requestResolution } from "@quarry/requester";

const scenario = useScenario("rq-mismatch");

test("same name, other params: RequestMismatchError naming the param, nothing written", async () => {
  const scn = scenario();
  const cm = await scn.admin.create<KubeObject>(configMaps, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "run-1", namespace: scn.namespace },
  });
  const owner = { apiVersion: "v1", kind: "ConfigMap", name: "run-1", uid: cm.metadata.uid! };
  const ask = {
    namespace: scn.namespace,
    resolverType: "git",
    params: [{ name: "revision", value: "v1.0.0" }],
    owner,
  };
  const name = buildRequest(ask).metadata.name!;
  // what a tampered (or colliding) request looks like: our name, someone else's ask
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, { "resolution.tekton.dev/type": "git" }, [
      { name: "revision", value: "evil" },
    ]),
  );
  const before = await getRequest(scn.admin, scn.namespace, name);
  await assert.rejects(requestResolution(scn.admin, ask), (err: unknown) => {
    assert.ok(err instanceof RequestMismatchError);
    assert.deepEqual(err.differences, ['param "revision" has another value']);
    assert.doesNotMatch(err.message, /evil/);
    return true;
  });
  const after = await getRequest(scn.admin, scn.namespace, name);
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
  assert.equal(after.metadata.ownerReferences, undefined);
});
