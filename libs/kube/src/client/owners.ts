// Which object controls a child: its ownerReference with `controller: true`
// (at most one per object, enforced by the apiserver). Owners live in the
// child's namespace (or are cluster-scoped), so the owner's key is the
// child's namespace plus the owner's name.
import type { OwnerReference } from "@quarry/api";
import type { KubeObject } from "./client.ts";

/**
 * Which owners count. `ownerApiVersion` pins group and version; `ownerGroup` accepts any version of a
 * group ("" is the core group); with neither, the kind alone decides.
 */
export type OwnerMatch =
  | { ownerKind: string; ownerApiVersion?: string; ownerGroup?: undefined }
  | { ownerKind: string; ownerGroup?: string; ownerApiVersion?: undefined };

/** The child's controller ownerReference if it matches, else undefined (non-controller owners never count). */
export function controllerOwner(obj: KubeObject, match: OwnerMatch): OwnerReference | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller === true);
  if (!ref || ref.kind !== match.ownerKind || !ref.name) return undefined;
  if (match.ownerApiVersion !== undefined && ref.apiVersion !== match.ownerApiVersion) return undefined;
  if (match.ownerGroup !== undefined && groupOf(ref.apiVersion) !== match.ownerGroup) return undefined;
  return ref;
}

/** Queue key (`namespace/name`, or `name` for a cluster-scoped child) of the child's matching controller. */
export function controllerOwnerKey(obj: KubeObject, match: OwnerMatch): string | undefined {
  const ref = controllerOwner(obj, match);
  if (!ref) return undefined;
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${ref.name}` : ref.name;
}

function groupOf(apiVersion: string | undefined): string {
  const i = (apiVersion ?? "").indexOf("/");
  return i < 0 ? "" : (apiVersion ?? "").slice(0, i);
}
