// The cluster resolver serves Tasks, Pipelines and StepActions of the
// request's namespace, stripped of this cluster's metadata, with a refSource
// that pins the object's uid and the digest of the bytes returned.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import {
  createRequest,
  dataOf,
  newRequest,
  resolvedOk,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import type { KubeObject } from "@quarry/kube";
import yaml from "js-yaml";

const scenario = useScenario("cluster", { start: ["lifecycle-controller", "cluster-resolver"] });
const cluster = { "resolution.tekton.dev/type": "cluster" };

for (const kind of ["Task", "Pipeline", "StepAction"]) {
  test(`resolves a ${kind} by kind and name`, async () => {
    const scn = scenario();
    const name = `my-${kind.toLowerCase()}`;
    const created: KubeObject = await applyObject(scn.admin, taskManifest(scn.namespace, name, kind));
    await createRequest(
      scn.admin,
      newRequest(scn.namespace, name, cluster, { kind: kind.toLowerCase(), name }),
    );
    const rr = await waitForRequest(scn, name, resolvedOk);
    const doc = yaml.load(dataOf(rr)) as { kind: string; metadata: Record<string, unknown> };
    assert.equal(doc.kind, kind);
    assert.equal(doc.metadata.name, name);
    for (const gone of ["uid", "resourceVersion", "managedFields", "creationTimestamp"]) {
      assert.equal(doc.metadata[gone], undefined, gone);
    }
    // Tekton's form: the lower-case singular kind (not the plural resource)
    const singular = kind.toLowerCase();
    const version = kind === "StepAction" ? "v1beta1" : "v1";
    assert.equal(
      rr.status?.refSource?.uri,
      `/apis/tekton.dev/${version}/namespaces/${scn.namespace}/${singular}/${name}@${created.metadata.uid}`,
    );
    const bytes = Buffer.from(rr.status?.data ?? "", "base64");
    assert.equal(rr.status?.refSource?.digest.sha256, createHash("sha256").update(bytes).digest("hex"));
    assert.deepEqual(rr.status?.source, rr.status?.refSource);
    assert.equal(rr.status?.annotations?.["resolution.tekton.dev/name"], name);
    assert.equal(rr.status?.annotations?.["resolution.tekton.dev/namespace"], scn.namespace);
    assert.equal(rr.status?.annotations?.["resolution.tekton.dev/content-type"], "application/x-yaml");
  });
}

test("kind defaults to task; the seed's in-cluster alias label works", async () => {
  const scn = scenario();
  await applyObject(scn.admin, taskManifest(scn.namespace, "aliased"));
  const rr = newRequest(
    scn.namespace,
    "aliased",
    { "resolution.tekton.dev/resolver": "in-cluster" },
    { name: "aliased" },
  );
  await createRequest(scn.admin, rr);
  const done = await waitForRequest(scn, "aliased", resolvedOk);
  assert.equal(done.metadata.labels?.["resolution.tekton.dev/type"], "cluster");
  assert.match(dataOf(done), /kind: Task/);
});
