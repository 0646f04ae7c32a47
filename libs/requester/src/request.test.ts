import assert from "node:assert/strict";
import { after, test } from "node:test";
import { type ResolutionRequest, requestNameFor } from "@quarry/api";
import type { KubeClient } from "@quarry/kube";
import { contextFromTraceparent, currentTraceparent, setupTracing, withSpan } from "@quarry/observability";
import { buildRequest, requestResolution } from "./request.ts";

const owner = { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", name: "run-1", uid: "uid-1" };
const params = [
  { name: "url", value: "https://example.com/r.git" },
  { name: "revision", value: "main" },
];

test("name, type label, spec and controller owner, Tekton style", () => {
  const rr = buildRequest({ namespace: "team-a", resolverType: "git", params, owner, labels: { app: "x" } });
  assert.equal(
    rr.metadata.name,
    requestNameFor({ resolverType: "git", namespace: "team-a", name: "run-1", spec: { params } }),
  );
  assert.match(rr.metadata.name!, /^git-[0-9a-f]{32}$/);
  assert.deepEqual(rr.metadata.labels, { app: "x", "resolution.tekton.dev/type": "git" });
  assert.deepEqual(rr.spec, { params });
  assert.notEqual(rr.spec.params, params); // a copy: the caller may mutate its own list
  assert.deepEqual(rr.metadata.ownerReferences, [{ ...owner, controller: true, blockOwnerDeletion: true }]);
  assert.equal(rr.metadata.annotations, undefined); // no active trace
});

test("the type label cannot be overridden by caller labels", () => {
  const rr = buildRequest({
    namespace: "n",
    resolverType: "git",
    params: [],
    baseName: "b",
    labels: { "resolution.tekton.dev/type": "bundles" },
  });
  assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], "git");
});

test("url goes into the spec and the name only when non-empty", () => {
  const base = { namespace: "n", resolverType: "git", params, baseName: "b" };
  assert.equal(buildRequest({ ...base, url: "" }).metadata.name, buildRequest(base).metadata.name);
  const withUrl = buildRequest({ ...base, url: "git+https://example.com/r.git" });
  assert.equal(withUrl.spec.url, "git+https://example.com/r.git");
  assert.notEqual(withUrl.metadata.name, buildRequest(base).metadata.name);
});

test("baseName overrides the owner's name in the hash", () => {
  const a = buildRequest({ namespace: "n", resolverType: "git", params, owner, baseName: "other" });
  assert.equal(
    a.metadata.name,
    requestNameFor({ resolverType: "git", namespace: "n", name: "other", spec: { params } }),
  );
});

test("bad input fails before any API call", () => {
  assert.throws(() => buildRequest({ namespace: "n", resolverType: "git", params }), /baseName/);
  assert.throws(
    () => buildRequest({ namespace: "n", resolverType: "Git!", params, baseName: "b" }),
    /DNS-1123/,
  );
  assert.throws(
    () => buildRequest({ namespace: "", resolverType: "git", params, baseName: "b" }),
    /namespace/,
  );
});

const tracing = setupTracing("requester-test");
after(() => tracing.shutdown());

test("the active trace context is stamped as traceparent; an explicit one wins", async () => {
  const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  await withSpan("reconcile", contextFromTraceparent(parent), {}, () => {
    const rr = buildRequest({ namespace: "n", resolverType: "git", params, baseName: "b" });
    const tp = rr.metadata.annotations?.traceparent ?? "";
    // same trace, a new span (the caller's), sampled
    assert.match(tp, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    assert.notEqual(tp, parent);
    const explicit = buildRequest({
      namespace: "n",
      resolverType: "git",
      params,
      baseName: "b",
      annotations: { traceparent: "00-11111111111111111111111111111111-2222222222222222-01" },
    });
    assert.equal(
      explicit.metadata.annotations?.traceparent,
      "00-11111111111111111111111111111111-2222222222222222-01",
    );
  });
});

test("requestResolution stamps its own create span: same trace as the caller, a child of its span", async () => {
  const created: ResolutionRequest[] = [];
  const client = {
    create: async (_rt: unknown, obj: ResolutionRequest) => {
      created.push(obj);
      return obj;
    },
  } as unknown as KubeClient;
  const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  let callerTraceparent: string | undefined;
  await withSpan("reconcile", contextFromTraceparent(parent), {}, async () => {
    callerTraceparent = currentTraceparent();
    await requestResolution(client, { namespace: "n", resolverType: "git", params, baseName: "b" });
  });
  const tp = created[0]?.metadata.annotations?.traceparent ?? "";
  assert.match(tp, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
  assert.notEqual(tp, callerTraceparent, "the create span's id, not the caller's");
  assert.equal(currentTraceparent(), undefined, "the span ended with the call");
});
