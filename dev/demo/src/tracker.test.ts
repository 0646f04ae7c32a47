import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { conditionText, refSourceText } from "./tracker.ts";

test("a condition reads with Quarry's finer reason when the resolver gave one", () => {
  const rr: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "x", namespace: "ns" },
    spec: { params: [] },
    status: {
      annotations: { "quarry.dev/reason": "NotFound" },
      conditions: [
        {
          type: "Succeeded",
          status: "False",
          reason: "ResolutionFailed",
          message: 'param "pathInRepo": no such file',
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    },
  };
  assert.equal(
    conditionText(rr),
    'Succeeded=False ResolutionFailed (NotFound): param "pathInRepo": no such file',
  );
  assert.equal(conditionText({ ...rr, status: {} }), undefined);
});

test("a refSource reads as quarry resolve prints it", () => {
  assert.equal(
    refSourceText({ uri: "git+http://h/r.git", digest: { sha1: "abc" }, entryPoint: "t.yaml" }),
    "git+http://h/r.git sha1:abc t.yaml",
  );
  assert.equal(refSourceText({ uri: "/apis/x@uid", digest: { sha256: "def" } }), "/apis/x@uid sha256:def");
});
