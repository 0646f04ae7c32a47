// Writes with optimistic locking. Every patch carries the resourceVersion it
// was computed from, so the apiserver refuses it (409) if the object moved;
// on conflict we re-read and recompute, silently, a bounded number of times.
import { isDeepStrictEqual } from "node:util";
import type { KubeClient, KubeObject } from "./client.ts";
import { isApiError, TransientError } from "./errors.ts";
import type { ResourceType } from "./resources.ts";

export interface LockedPatchOptions {
  subresource?: "status";
  maxAttempts?: number;
}

/**
 * Computes a merge patch from the latest object and applies it under its
 * resourceVersion. `compute` returns undefined when nothing needs writing.
 * Returns the updated object, or undefined if nothing was written (no change
 * or the object is gone).
 */
export async function lockedMergePatch<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  obj: T,
  compute: (latest: T) => Record<string, unknown> | undefined,
  opts: LockedPatchOptions = {},
): Promise<T | undefined> {
  const { namespace, name } = obj.metadata;
  if (!name) throw new Error("object has no name");
  let latest = obj;
  const attempts = opts.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const patch = compute(latest);
    if (!patch) return undefined;
    const meta = (patch.metadata ?? {}) as Record<string, unknown>;
    const body = { ...patch, metadata: { ...meta, resourceVersion: latest.metadata.resourceVersion } };
    try {
      return await client.mergePatch<T>(rt, namespace, name, body, opts.subresource);
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      if (!isApiError(err, 409)) throw err;
      if (attempt >= attempts)
        throw new TransientError(`conflict persisted after ${attempts} attempts`, { cause: err });
      try {
        latest = await client.get<T>(rt, namespace, name);
      } catch (getErr) {
        if (isApiError(getErr, 404)) return undefined;
        throw getErr;
      }
    }
  }
}

/**
 * The part of `desired` that differs from `current` (top-level keys), or
 * undefined when equal: how status writes are skipped when nothing changed.
 */
export function changedFields(
  current: Record<string, unknown> | undefined,
  desired: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(desired)) {
    if (!isDeepStrictEqual(current?.[k], v)) out[k] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

/** Status write with optimistic locking, skipped when the status already matches. */
export function patchStatus<T extends KubeObject & { status?: object }>(
  client: KubeClient,
  rt: ResourceType,
  obj: T,
  desiredStatus: (latest: T) => Record<string, unknown> | undefined,
): Promise<T | undefined> {
  return lockedMergePatch(
    client,
    rt,
    obj,
    (latest) => {
      const desired = desiredStatus(latest);
      const changes = desired && changedFields(latest.status as Record<string, unknown> | undefined, desired);
      return changes ? { status: changes } : undefined;
    },
    { subresource: "status" },
  );
}
