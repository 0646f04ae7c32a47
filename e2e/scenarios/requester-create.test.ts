// The requester creates a request Tekton would recognise: the deterministic
// name, the resolver-type label, the owner as controller, and the caller's
// trace context as a traceparent annotation.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { requestNameFor } from "@quarry/api";
import { getRequest, useScenario } from "@quarry/harness/scenario";
import { configMaps, type KubeObject } from "@quarry/kube";
// e2e/package.json lists neither @quarry/observability nor @quarry/requester yet; relative paths
// resolve to the same modules (pnpm links workspace packages, Node follows the links).
import { contextFromTraceparent, setupTracing, withSpan } from "@quarry/observability";
import { requestResolution } from "@quarry/requester";

const scenario = useScenario("rq-create");
const tracing = setupTracing("requester-e2e");
after(() => tracing.shutdown());

test("create: Tekton's name, type label, controller owner, traceparent", async () => {
  const scn = scenario();
  const cm = await scn.admin.create<KubeObject>(configMaps, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "run-1", namespace: scn.namespace },
  });
  const owner = { apiVersion: "v1", kind: "ConfigMap", name: "run-1", uid: cm.metadata.uid! };
  const params = [
    { name: "url", value: "https://example.com/r.git" },
    { name: "revision", value: "main" },
    { name: "pathInRepo", value: "task.yaml" },
  ];
  const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const created = await withSpan("reconcile", contextFromTraceparent(parent), {}, () =>
    requestResolution(scn.admin, { namespace: scn.namespace, resolverType: "git", params, owner }),
  );
  const name = requestNameFor({
    resolverType: "git",
    namespace: scn.namespace,
    name: "run-1",
    spec: { params },
  });
  assert.equal(created.metadata.name, name);
  const stored = await getRequest(scn.admin, scn.namespace, name);
  assert.equal(stored.metadata.labels?.["resolution.tekton.dev/type"], "git");
  assert.deepEqual(stored.spec.params, params);
  assert.deepEqual(stored.metadata.ownerReferences, [
    { ...owner, controller: true, blockOwnerDeletion: true },
  ]);
  assert.match(
    stored.metadata.annotations?.traceparent ?? "",
    /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/,
  );
});
