import assert from "node:assert/strict";
import { test } from "node:test";
import { specToV1Alpha1, specToV1Beta1, toV1Alpha1, toV1Beta1 } from "./conversion.ts";
import { ANNOTATION_V1BETA1_SPEC } from "./labels.ts";
import type { ResolutionRequest, ResolutionRequestV1Alpha1 } from "./types.ts";

const status = {
  conditions: [{ type: "Succeeded", status: "True" as const }],
  data: "a2luZDogVGFzaw==",
  refSource: { uri: "git+https://x/r.git", digest: { sha1: "abc" }, entryPoint: "task.yaml" },
};

function alpha(
  params?: Record<string, string>,
  annotations?: Record<string, string>,
): ResolutionRequestV1Alpha1 {
  return {
    apiVersion: "resolution.tekton.dev/v1alpha1",
    kind: "ResolutionRequest",
    metadata: {
      name: "r",
      namespace: "ns",
      labels: { "resolution.tekton.dev/type": "git" },
      ...(annotations && { annotations }),
    },
    spec: params ? { params } : {},
    status: structuredClone(status),
  };
}

test("v1alpha1 → v1beta1: the string map becomes a list, metadata and status are copied", () => {
  const out = toV1Beta1(alpha({ url: "https://x/r.git", revision: "main" }));
  assert.deepEqual(out, {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns", labels: { "resolution.tekton.dev/type": "git" } },
    spec: {
      params: [
        { name: "url", value: "https://x/r.git" },
        { name: "revision", value: "main" },
      ],
    },
    status,
  });
});

test("v1beta1 string params convert to v1alpha1 without an annotation, and back", () => {
  const beta = toV1Beta1(alpha({ a: "1", b: "2" }));
  const back = toV1Alpha1(beta);
  assert.deepEqual(back, alpha({ a: "1", b: "2" }));
  assert.equal(back.metadata.annotations, undefined);
});

test("non-string values are JSON-encoded for v1alpha1 and restored from the annotation", () => {
  const beta: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns", annotations: { keep: "me" } },
    spec: {
      params: [
        { name: "s", value: "plain" },
        { name: "arr", value: ["a", "b"] },
        { name: "obj", value: { k: "v" } },
      ],
      url: "https://foo/bar",
    },
  };
  const a = toV1Alpha1(beta);
  assert.deepEqual(a.spec.params, { s: "plain", arr: '["a","b"]', obj: '{"k":"v"}' });
  assert.deepEqual(JSON.parse(a.metadata.annotations?.[ANNOTATION_V1BETA1_SPEC] ?? "null"), {
    url: "https://foo/bar",
    jsonParams: ["arr", "obj"],
    order: ["s", "arr", "obj"],
  });
  assert.equal(a.metadata.annotations?.keep, "me");
  assert.deepEqual(toV1Beta1(a), beta); // lossless round trip, annotation removed again
  assert.equal(beta.metadata.annotations?.[ANNOTATION_V1BETA1_SPEC], undefined); // input untouched
});

test("a v1alpha1 client that rewrote a JSON param as plain text keeps its string", () => {
  const spec = specToV1Beta1(
    { params: { arr: "not json", obj: '"a json string"' } },
    { jsonParams: ["arr", "obj"] },
  );
  assert.deepEqual(spec.params, [
    { name: "arr", value: "not json" },
    { name: "obj", value: '"a json string"' },
  ]);
});

test("an unreadable annotation restores nothing, and is dropped", () => {
  const out = toV1Beta1(alpha({ arr: '["a"]' }, { [ANNOTATION_V1BETA1_SPEC]: "{oops" }));
  assert.deepEqual(out.spec.params, [{ name: "arr", value: '["a"]' }]);
  assert.equal(out.metadata.annotations, undefined);
});

test("empty specs stay empty", () => {
  assert.deepEqual(specToV1Alpha1({}), { spec: {}, extras: undefined });
  assert.deepEqual(specToV1Beta1({}), {});
  assert.deepEqual(specToV1Alpha1({ params: [] }), { spec: {}, extras: undefined });
});

test("a v1beta1 list's own order survives v1alpha1's map, which the apiserver serialises sorted", () => {
  const beta: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns" },
    spec: {
      params: [
        { name: "url", value: "u" },
        { name: "paths", value: ["a"] },
        { name: "kind", value: "task" },
      ],
    },
  };
  const down = toV1Alpha1(beta);
  assert.deepEqual(JSON.parse(down.metadata.annotations?.[ANNOTATION_V1BETA1_SPEC] ?? ""), {
    jsonParams: ["paths"],
    order: ["url", "paths", "kind"],
  });
  // as the apiserver hands it back: keys sorted; and a v1alpha1 client's new param goes last
  const params = down.spec.params ?? {};
  const sorted = Object.fromEntries(
    [...Object.entries(params), ["added", "x"] as const].sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  const up = toV1Beta1({ ...down, spec: { params: sorted } });
  assert.deepEqual(up.spec.params, [...(beta.spec.params ?? []), { name: "added", value: "x" }]);
  // sorted names need no order
  assert.equal(
    specToV1Alpha1({
      params: [
        { name: "a", value: "1" },
        { name: "b", value: "2" },
      ],
    }).extras,
    undefined,
  );
});
