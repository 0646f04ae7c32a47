// Helpers over status.conditions. The readers take either an object with a
// status (a ResolutionRequest, a Run) or a status itself, since callers hold
// one or the other; setCondition is the one writer every controller and SDK uses.
import { CONDITION_SUCCEEDED } from "./reasons.ts";
import type { Condition } from "./types.ts";

/** An object with a status, or a status: anything with conditions at either level. */
export interface HasConditions {
  conditions?: readonly Condition[] | undefined;
  status?: { conditions?: readonly Condition[] | undefined } | undefined;
}

/** The condition of the given type, if present (the first one, should a writer have duplicated it). */
export function getCondition(obj: HasConditions | undefined, type: string): Condition | undefined {
  return (obj?.conditions ?? obj?.status?.conditions)?.find((c) => c.type === type);
}

/** Done once the Succeeded condition is True or False. */
export function isDone(obj: HasConditions | undefined): boolean {
  const status = getCondition(obj, CONDITION_SUCCEEDED)?.status;
  return status === "True" || status === "False";
}

/** RFC 3339 at seconds precision, as the apiserver and Tekton write condition and run times. */
export function rfc3339Seconds(now: Date | number): string {
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The conditions without any of `next`'s type, then `next` (the others keep their order); never
 * mutates `conditions`. lastTransitionTime is the old one while the status and the reason stay
 * (and the old one has a time), else `now`.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: Date | number,
): Condition[] {
  const existing = conditions ?? [];
  const old = existing.find((c) => c.type === next.type);
  // A new reason is a transition too (Started → Running), as Tekton's conditions count it; a new
  // message alone (progress text) is not.
  const lastTransitionTime =
    old && old.status === next.status && old.reason === next.reason && old.lastTransitionTime
      ? old.lastTransitionTime
      : rfc3339Seconds(now);
  return [...existing.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}
