// ownerReferences of a request. The first caller becomes the controller owner
// (Tekton's NewControllerRef: controller and blockOwnerDeletion); later callers
// that share the request are added as plain owners, so the garbage collector
// deletes it only when every owner is gone, and nobody fights over control.
import type { OwnerReference } from "@quarry/api";

/** The reference the creating caller gets: controller, and blocking its owner's foreground deletion by default. */
export function controllerRef(owner: OwnerReference): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: owner.uid,
    controller: true,
    blockOwnerDeletion: owner.blockOwnerDeletion ?? true,
  };
}

/**
 * An adopting caller's reference: never a controller (a request has at most one, and it is the
 * creator's). blockOwnerDeletion is kept only if the caller asked for it.
 */
export function sharedOwnerRef(owner: OwnerReference): OwnerReference {
  const ref: OwnerReference = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: owner.uid,
  };
  if (owner.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = owner.blockOwnerDeletion;
  return ref;
}

/**
 * The full ownerReferences list with `owner` added as a shared owner, or undefined when it is
 * already there (matched by uid, which names one incarnation of an object; a recreated owner
 * with the same name is a new owner). The list is returned whole because a JSON merge patch
 * replaces lists; existing entries are kept untouched and in order.
 */
export function withSharedOwner(
  existing: readonly OwnerReference[] | undefined,
  owner: OwnerReference,
): OwnerReference[] | undefined {
  const refs = existing ?? [];
  if (refs.some((r) => r.uid === owner.uid)) return undefined;
  return [...refs, sharedOwnerRef(owner)];
}
