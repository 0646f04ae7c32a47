// Read-only helpers over status.conditions. They take either an object with a
// status (a ResolutionRequest, a Run) or a status itself, since callers hold
// one or the other.
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
