// Serving v1alpha1 through the lifecycle controller's conversion webhook, on a real apiserver
// calling it over TLS with the CA bundle the controller injected itself: a v1beta1 request with
// array and object params and spec.url reads through v1alpha1 as a string map, an update through
// v1alpha1 loses nothing of it, and a v1alpha1 client's request is resolved by a real resolver.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  ANNOTATION_V1BETA1_SPEC,
  type ResolutionRequest,
  type ResolutionRequestV1Alpha1,
  resolutionRequests,
} from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  type ConversionCluster,
  injectedCaBundle,
  newRequestV1Alpha1,
  resolutionRequestsV1Alpha1,
  startConversionCluster,
} from "@quarry/harness/conversion";
import { taskManifest } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";
import yaml from "js-yaml";

let cc: ConversionCluster;
before(async () => {
  cc = await startConversionCluster("conv-rt", ["cluster-resolver"]);
});
after(() => cc?.stop());

const spec: ResolutionRequest["spec"] = {
  params: [
    { name: "url", value: "https://example.com/repo.git" },
    { name: "pathInRepo", value: "task.yaml" },
    { name: "paths", value: ["a.yaml", "b.yaml"] },
    { name: "opts", value: { depth: "1", sparse: "true" } },
  ],
  url: "git+https://example.com/repo.git@main#task.yaml",
};

test("the apiserver trusts the webhook through the CA bundle the controller injected", async () => {
  const bundle = await injectedCaBundle(cc.scn);
  assert.match(bundle, /^-----BEGIN CERTIFICATE-----/);
});

test("v1beta1 → read and updated through v1alpha1 → read through v1beta1: the spec identical", async () => {
  const { scn } = cc;
  await scn.admin.create(resolutionRequests, {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "rich", namespace: scn.namespace, labels: { "resolution.tekton.dev/type": "git" } },
    spec,
  } satisfies ResolutionRequest);

  const alpha = await scn.admin.get<ResolutionRequestV1Alpha1>(
    resolutionRequestsV1Alpha1,
    scn.namespace,
    "rich",
  );
  assert.equal(alpha.apiVersion, "resolution.tekton.dev/v1alpha1");
  assert.deepEqual(alpha.spec.params, {
    url: "https://example.com/repo.git",
    pathInRepo: "task.yaml",
    paths: '["a.yaml","b.yaml"]',
    opts: '{"depth":"1","sparse":"true"}',
  });
  assert.deepEqual(JSON.parse(alpha.metadata.annotations?.[ANNOTATION_V1BETA1_SPEC] ?? "{}"), {
    url: spec.url,
    jsonParams: ["paths", "opts"],
    order: ["url", "pathInRepo", "paths", "opts"],
  });

  // an update through v1alpha1 (a label), retried if the lifecycle controller wrote in between
  await waitUntil("update through v1alpha1", async () => {
    const cur = await scn.admin.get<ResolutionRequestV1Alpha1>(
      resolutionRequestsV1Alpha1,
      scn.namespace,
      "rich",
    );
    cur.metadata.labels = { ...cur.metadata.labels, "example.com/touched": "v1alpha1" };
    try {
      await scn.admin.replace(resolutionRequestsV1Alpha1, cur);
      return true;
    } catch (err) {
      if (isApiError(err, 409)) return false;
      throw err;
    }
  });

  const beta = await scn.admin.get<ResolutionRequest>(resolutionRequests, scn.namespace, "rich");
  assert.deepEqual(beta.spec, spec);
  assert.equal(beta.metadata.labels?.["example.com/touched"], "v1alpha1");
  assert.equal(
    beta.metadata.annotations?.[ANNOTATION_V1BETA1_SPEC],
    undefined,
    "the annotation is v1alpha1's only",
  );
});

test("a v1alpha1 client's request is resolved by the cluster resolver and read back through v1alpha1", async () => {
  const { scn } = cc;
  await applyObject(scn.admin, taskManifest(scn.namespace, "hello"));
  await scn.admin.create(
    resolutionRequestsV1Alpha1,
    newRequestV1Alpha1(
      scn.namespace,
      "from-alpha",
      { "resolution.tekton.dev/type": "cluster" },
      { kind: "task", name: "hello" },
    ),
  );
  const done = await waitUntil(
    "v1alpha1 request resolved",
    async () => {
      const rr = await scn.admin.get<ResolutionRequestV1Alpha1>(
        resolutionRequestsV1Alpha1,
        scn.namespace,
        "from-alpha",
      );
      const ok = rr.status?.conditions?.find((c) => c.type === "Succeeded")?.status === "True";
      return ok ? rr : undefined;
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(done.apiVersion, "resolution.tekton.dev/v1alpha1");
  assert.deepEqual(done.spec.params, { kind: "task", name: "hello" });
  const task = yaml.load(Buffer.from(done.status?.data ?? "", "base64").toString()) as {
    kind: string;
    metadata: { name: string };
  };
  assert.equal(task.kind, "Task");
  assert.equal(task.metadata.name, "hello");
  // stored as v1beta1: the resolver (a v1beta1 client) saw a params list
  const beta = await scn.admin.get<ResolutionRequest>(resolutionRequests, scn.namespace, "from-alpha");
  assert.deepEqual(beta.spec.params, [
    { name: "kind", value: "task" },
    { name: "name", value: "hello" },
  ]);
});
