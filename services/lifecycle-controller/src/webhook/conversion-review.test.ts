import assert from "node:assert/strict";
import { test } from "node:test";
import { ANNOTATION_V1BETA1_SPEC, RESOLUTION_V1ALPHA1, RESOLUTION_V1BETA1 } from "@quarry/api";
import { reviewConversion } from "./conversion-review.ts";

const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: "ns",
  uid: `uid-${name}`,
  resourceVersion: "7",
  labels: { "resolution.tekton.dev/type": "git" },
  ...extra,
});

const beta = (name: string, spec: unknown, status?: unknown) => ({
  apiVersion: RESOLUTION_V1BETA1,
  kind: "ResolutionRequest",
  metadata: meta(name),
  spec,
  ...(status === undefined ? {} : { status }),
});

const alpha = (name: string, spec: unknown, annotations?: Record<string, string>) => ({
  apiVersion: RESOLUTION_V1ALPHA1,
  kind: "ResolutionRequest",
  metadata: meta(name, annotations ? { annotations } : {}),
  spec,
});

const review = (desiredAPIVersion: unknown, objects: unknown, uid: unknown = "rev-1") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "ConversionReview",
  request: { uid, desiredAPIVersion, objects },
});

const richSpec = {
  params: [
    { name: "url", value: "https://example.com/repo.git" },
    { name: "paths", value: ["a.yaml", "b.yaml"] },
    { name: "opts", value: { depth: "1" } },
  ],
  url: "git+https://example.com/repo.git",
};
const richAlphaAnnotation = JSON.stringify({
  url: richSpec.url,
  jsonParams: ["paths", "opts"],
  order: ["url", "paths", "opts"],
});
const status = { conditions: [{ type: "Succeeded", status: "True" }], data: "a2luZDogVGFzaw==" };

interface Case {
  name: string;
  body: unknown;
  status: 200 | 400;
  result?: "Success" | "Failure";
  /** The converted objects on success. */
  objects?: unknown[];
  /** A pattern the failure message matches. */
  message?: RegExp;
}

const cases: Case[] = [
  {
    name: "v1beta1 → v1alpha1: array and object params JSON-encoded, url and their names in the annotation, status kept",
    body: review(RESOLUTION_V1ALPHA1, [beta("r1", richSpec, status)]),
    status: 200,
    result: "Success",
    objects: [
      {
        apiVersion: RESOLUTION_V1ALPHA1,
        kind: "ResolutionRequest",
        metadata: { ...meta("r1"), annotations: { [ANNOTATION_V1BETA1_SPEC]: richAlphaAnnotation } },
        spec: {
          params: {
            url: "https://example.com/repo.git",
            paths: '["a.yaml","b.yaml"]',
            opts: '{"depth":"1"}',
          },
        },
        status,
      },
    ],
  },
  {
    name: "v1alpha1 → v1beta1 restores the list, the values and url; the annotation goes",
    body: review(RESOLUTION_V1BETA1, [
      alpha(
        "r1",
        {
          params: {
            url: "https://example.com/repo.git",
            paths: '["a.yaml","b.yaml"]',
            opts: '{"depth":"1"}',
          },
        },
        { [ANNOTATION_V1BETA1_SPEC]: richAlphaAnnotation },
      ),
    ]),
    status: 200,
    result: "Success",
    objects: [
      { apiVersion: RESOLUTION_V1BETA1, kind: "ResolutionRequest", metadata: meta("r1"), spec: richSpec },
    ],
  },
  {
    name: "a plain v1alpha1 request (a seed client's) becomes string params",
    body: review(RESOLUTION_V1BETA1, [alpha("r2", { params: { name: "task", kind: "task" } })]),
    status: 200,
    result: "Success",
    objects: [
      beta("r2", {
        params: [
          { name: "name", value: "task" },
          { name: "kind", value: "task" },
        ],
      }),
    ],
  },
  {
    name: "same version: the object as sent",
    body: review(RESOLUTION_V1BETA1, [beta("r3", richSpec)]),
    status: 200,
    result: "Success",
    objects: [beta("r3", richSpec)],
  },
  {
    name: "several objects (a list), each to the desired version",
    body: review(RESOLUTION_V1ALPHA1, [beta("a", {}), alpha("b", {})]),
    status: 200,
    result: "Success",
    objects: [alpha("a", {}), alpha("b", {})],
  },
  {
    name: "no objects: Success with none",
    body: review(RESOLUTION_V1ALPHA1, []),
    status: 200,
    result: "Success",
    objects: [],
  },
  {
    name: "one bad object fails the whole review, naming it; nothing converted comes back",
    body: review(RESOLUTION_V1ALPHA1, [beta("good", {}), beta("bad", { params: [{ name: "n", value: 3 }] })]),
    status: 200,
    result: "Failure",
    objects: [],
    message:
      /^ResolutionRequest ns\/bad: converting .*v1beta1 to .*v1alpha1: spec\.params\[0\] \(n\): value must be/,
  },
  {
    name: "a v1alpha1 param that is no string",
    body: review(RESOLUTION_V1BETA1, [alpha("bad", { params: { n: ["x"] } })]),
    status: 200,
    result: "Failure",
    message: /ResolutionRequest ns\/bad: .*spec\.params\.n is not a string/,
  },
  {
    name: "an unknown desired version",
    body: review("resolution.tekton.dev/v2", [beta("r", {})]),
    status: 200,
    result: "Failure",
    message: /cannot convert to resolution\.tekton\.dev\/v2/,
  },
  {
    name: "an object of another kind",
    body: review(RESOLUTION_V1ALPHA1, [{ ...beta("r", {}), kind: "Pipe" }]),
    status: 200,
    result: "Failure",
    message: /^Pipe ns\/r: kind Pipe is not ResolutionRequest/,
  },
  {
    name: "an object of an unknown version",
    body: review(RESOLUTION_V1ALPHA1, [{ ...beta("r", {}), apiVersion: "resolution.tekton.dev/v9" }]),
    status: 200,
    result: "Failure",
    message: /unknown apiVersion resolution\.tekton\.dev\/v9/,
  },
  {
    name: "no uid",
    body: review(RESOLUTION_V1ALPHA1, [], ""),
    status: 200,
    result: "Failure",
    message: /uid/,
  },
  { name: "not a review", body: { kind: "AdmissionReview", request: {} }, status: 400 },
  { name: "no body", body: undefined, status: 400 },
  {
    name: "v1beta1 reviews are not spoken",
    body: { ...review(RESOLUTION_V1ALPHA1, []), apiVersion: "apiextensions.k8s.io/v1beta1" },
    status: 400,
  },
];

for (const c of cases) {
  test(`conversion review: ${c.name}`, () => {
    const out = reviewConversion(c.body);
    assert.equal(out.status, c.status);
    if (out.status !== 200) return;
    assert.equal(out.body.apiVersion, "apiextensions.k8s.io/v1");
    assert.equal(out.body.kind, "ConversionReview");
    assert.equal(out.body.response.result.status, c.result);
    if (c.body && typeof c.body === "object" && "request" in c.body) {
      const uid = (c.body.request as { uid?: unknown }).uid;
      if (typeof uid === "string") assert.equal(out.body.response.uid, uid);
    }
    if (c.objects) assert.deepEqual(out.body.response.convertedObjects, c.objects);
    if (c.message) {
      assert.equal(out.body.response.result.status, "Failure");
      if (out.body.response.result.status === "Failure")
        assert.match(out.body.response.result.message, c.message);
    }
  });
}

test("conversion review: v1beta1 → v1alpha1 → v1beta1 is lossless, the input untouched", () => {
  const original = beta("rt", richSpec, status);
  const before = structuredClone(original);
  const down = reviewConversion(review(RESOLUTION_V1ALPHA1, [original]));
  assert.equal(down.status, 200);
  const up = reviewConversion(
    review(RESOLUTION_V1BETA1, down.status === 200 ? down.body.response.convertedObjects : []),
  );
  assert.equal(up.status, 200);
  assert.deepEqual(up.status === 200 && up.body.response.convertedObjects, [original]);
  assert.deepEqual(original, before);
});
