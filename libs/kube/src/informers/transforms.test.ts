import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "../client/client.ts";
import { DATA_OMITTED, dropApplyMetadata, dropManagedFields, dropRequestData } from "./transforms.ts";

type Obj = KubeObject & { status?: { data?: string; conditions?: unknown[] } };
const object = (): Obj => ({
  apiVersion: "v1",
  kind: "Thing",
  metadata: {
    name: "x",
    namespace: "ns",
    annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" },
    managedFields: [{ manager: "kubectl", operation: "Apply" }],
  } as KubeObject["metadata"],
  status: { data: "dGFzaw==", conditions: [{ type: "Succeeded", status: "True" }] },
});

test("dropManagedFields removes only managedFields", () => {
  const out = dropManagedFields(object());
  assert.equal("managedFields" in out.metadata, false);
  assert.equal(out.metadata.annotations?.keep, "me");
  assert.equal(out.status?.data, "dGFzaw==");
});

test("dropApplyMetadata also removes the last-applied annotation and keeps the others", () => {
  const out = dropApplyMetadata(object());
  assert.equal("managedFields" in out.metadata, false);
  assert.deepEqual(out.metadata.annotations, { keep: "me" });
});

test("dropRequestData keeps that a request has data, not the data", () => {
  const out = dropRequestData(object());
  assert.equal(out.status?.data, DATA_OMITTED);
  assert.equal(out.status?.conditions?.length, 1);
  const empty = object();
  delete empty.status?.data;
  assert.equal(dropRequestData(empty).status?.data, undefined, "no data stays no data");
});
