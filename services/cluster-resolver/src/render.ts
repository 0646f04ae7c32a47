// What the cluster resolver returns: the object as YAML without the
// metadata that belongs to this cluster's copy (so the bytes, and their
// digest, depend only on the definition).
import { createHash } from "node:crypto";
import type { KubeObject } from "@quarry/kube";
import yaml from "js-yaml";

const RUNTIME_METADATA = [
  "managedFields",
  "resourceVersion",
  "uid",
  "ownerReferences",
  "creationTimestamp",
  "generation",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "finalizers",
  "generateName",
];
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

export function renderObject(obj: KubeObject & Record<string, unknown>): {
  bytes: Uint8Array;
  sha256: string;
} {
  const metadata: Record<string, unknown> = { ...obj.metadata };
  for (const k of RUNTIME_METADATA) delete metadata[k];
  if (obj.metadata.annotations) {
    const { [LAST_APPLIED]: _dropped, ...rest } = obj.metadata.annotations;
    if (Object.keys(rest).length) metadata.annotations = rest;
    else delete metadata.annotations;
  }
  const { status: _status, metadata: _m, ...body } = obj;
  const out = { apiVersion: obj.apiVersion, kind: obj.kind, metadata, ...body };
  const text = yaml.dump(out, { noRefs: true, lineWidth: -1 });
  const bytes = new TextEncoder().encode(text);
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}
