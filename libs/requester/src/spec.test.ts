import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { paramDifferences, requestDifferences } from "./spec.ts";

function rr(labels: Record<string, string>, spec: ResolutionRequest["spec"]): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "git-x", namespace: "ns", labels },
    spec,
  };
}

test("param order does not matter (the name hash sorts by name)", () => {
  const a = [
    { name: "url", value: "https://example.com/r.git" },
    { name: "revision", value: "main" },
  ];
  assert.deepEqual(paramDifferences(a, [...a].reverse()), []);
});

test("object keys are unordered, array order matters", () => {
  assert.deepEqual(
    paramDifferences([{ name: "o", value: { a: "1", b: "2" } }], [{ name: "o", value: { b: "2", a: "1" } }]),
    [],
  );
  assert.deepEqual(paramDifferences([{ name: "l", value: ["a", "b"] }], [{ name: "l", value: ["b", "a"] }]), [
    'param "l" has another value',
  ]);
});

test("a string and an array that hash alike are different asks", () => {
  assert.deepEqual(paramDifferences([{ name: "l", value: '["a"]' }], [{ name: "l", value: ["a"] }]), [
    'param "l" has another value',
  ]);
});

test("missing and extra params are named, values never quoted", () => {
  const diff = paramDifferences(
    [
      { name: "gitToken", value: "secret-a" },
      { name: "only-existing", value: "x" },
    ],
    [
      { name: "gitToken", value: "secret-b" },
      { name: "only-wanted", value: "y" },
    ],
  );
  assert.deepEqual(diff, [
    'param "gitToken" has another value',
    'param "only-existing" only in the existing request',
    'param "only-wanted" missing from the existing request',
  ]);
  assert.ok(!diff.join().includes("secret"));
});

test("absent params and an empty list are the same", () => {
  assert.deepEqual(paramDifferences(undefined, []), []);
});

test("resolver type compares canonical names; url empty = absent", () => {
  const existing = rr({ "resolution.tekton.dev/type": "bundles" }, { params: [], url: "" });
  assert.deepEqual(requestDifferences(existing, { resolverType: "bundle", params: [] }), []);
  assert.deepEqual(requestDifferences(existing, { resolverType: "git", params: [], url: "oci://x" }), [
    'resolver type "bundles" instead of "git"',
    "url differs",
  ]);
});

test("the seed's alias label counts as the type", () => {
  const existing = rr({ "resolution.tekton.dev/resolver": "in-cluster" }, {});
  assert.deepEqual(requestDifferences(existing, { resolverType: "cluster", params: [] }), []);
});

test("a request without any resolver label is a difference", () => {
  assert.deepEqual(requestDifferences(rr({}, {}), { resolverType: "git", params: [] }), [
    "the existing request has no resolver label",
  ]);
});
