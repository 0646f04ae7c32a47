import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import yaml from "js-yaml";
import { renderObject } from "./render.ts";

test("renderObject strips this cluster's metadata and status, keeps the definition", () => {
  const { bytes, sha256 } = renderObject({
    apiVersion: "tekton.dev/v1",
    kind: "Task",
    metadata: {
      name: "build",
      namespace: "ns",
      uid: "u-1",
      resourceVersion: "42",
      generation: 3,
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { team: "a" },
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", note: "keep" },
    },
    spec: { steps: [{ name: "s", image: "busybox" }] },
    status: { whatever: true },
  });
  const doc = yaml.load(Buffer.from(bytes).toString("utf8"));
  assert.deepEqual(doc, {
    apiVersion: "tekton.dev/v1",
    kind: "Task",
    metadata: { name: "build", namespace: "ns", labels: { team: "a" }, annotations: { note: "keep" } },
    spec: { steps: [{ name: "s", image: "busybox" }] },
  });
  assert.equal(sha256, createHash("sha256").update(bytes).digest("hex"));
});
