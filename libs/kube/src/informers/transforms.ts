// Informer transforms (client-go's SetTransform): what a cache never needs is
// dropped before the object is stored, so a cache of thousands of objects
// does not hold it. managedFields is the largest part of most objects (one
// entry per manager that ever wrote them, each a tree of field names) and only
// the run controller reads it; the last-applied annotation repeats the whole
// object for kubectl-applied definitions.
import type { KubeObject } from "../client/client.ts";

export type Transform<T> = (obj: T) => T;

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Every informer's default: the object without metadata.managedFields. */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  if ("managedFields" in obj.metadata) delete (obj.metadata as { managedFields?: unknown }).managedFields;
  return obj;
}

/** Keeps the object whole: for a controller that reads managedFields (the run controller's cancel time). */
export function keepWhole<T>(obj: T): T {
  return obj;
}

/** managedFields and the last-applied annotation, for caches of definitions served from their spec. */
export function dropApplyMetadata<T extends KubeObject>(obj: T): T {
  dropManagedFields(obj);
  const annotations = obj.metadata.annotations;
  if (annotations && LAST_APPLIED in annotations) {
    const { [LAST_APPLIED]: _dropped, ...rest } = annotations;
    obj.metadata.annotations = rest;
  }
  return obj;
}

/** What stands in for a request's status.data in a cache that only asks whether there is any. */
export const DATA_OMITTED = "(omitted from this cache)";

/**
 * For the ResolutionRequest caches of the lifecycle controller and the resolvers, which ask only
 * whether a request has data (it is then resolved), never what it is: the data, up to the size
 * cap per request, is replaced by DATA_OMITTED. Every write to a request is a merge patch of the
 * fields it changes, so the marker is never written back.
 */
export function dropRequestData<T extends KubeObject & { status?: { data?: string } }>(obj: T): T {
  dropManagedFields(obj);
  if (obj.status?.data) obj.status.data = DATA_OMITTED;
  return obj;
}
