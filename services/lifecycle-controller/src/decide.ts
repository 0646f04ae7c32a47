// The lifecycle controller's decisions, as a pure function of the request and
// the world (time, config). The controller turns a Decision into API writes.
// Mirrors Tekton's lifecycle reconciler, plus Quarry's label normalisation
// and a timeout message that says whether any resolver answered at all.
import {
  ANNOTATION_REASON,
  CONDITION_SUCCEEDED,
  type Condition,
  getCondition,
  isDone,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
  QuarryReason,
  REASON_RESOLUTION_FAILED,
  REASON_RESOLUTION_IN_PROGRESS,
  REASON_RESOLUTION_TIMED_OUT,
  type ResolutionRequest,
  resolverTypeOf,
  setCondition,
} from "@quarry/api";
import { formatDuration } from "@quarry/kube";
import type { LifecycleConfig } from "./config.ts";

export const MESSAGE_WAITING = "waiting for resolver";

export interface World {
  now: number;
  config: LifecycleConfig;
}

export interface Decision {
  /** Set this canonical resolver label on the object (metadata patch). */
  canonicalLabel?: string;
  /**
   * Desired status fields: conditions and observedGeneration, and, when the controller ends a
   * request itself, the request's annotations with its quarry.dev/reason added.
   */
  status?: { conditions: Condition[]; observedGeneration?: number; annotations?: Record<string, string> };
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
  requeueAfterMs?: number;
}

export function decide(rr: ResolutionRequest, world: World): Decision {
  if (isDone(rr.status)) return {};
  const { type, canonicalLabelMissingOrWrong } = resolverTypeOf(rr.metadata.labels);
  const withStatus = (condition: Condition, reason?: QuarryReason): Decision["status"] => ({
    conditions: setCondition(rr.status?.conditions, condition, world.now),
    observedGeneration: rr.metadata.generation,
    ...(reason && { annotations: { ...rr.status?.annotations, [ANNOTATION_REASON]: reason } }),
  });

  if (!type) {
    const message = `request has neither the "${LABEL_RESOLVER_TYPE}" label nor its alias "${LABEL_RESOLVER_ALIAS}", so no resolver can claim it`;
    return {
      status: withStatus(failed(REASON_RESOLUTION_FAILED, message), QuarryReason.MissingResolverLabel),
      event: { type: "Warning", reason: REASON_RESOLUTION_FAILED, message },
    };
  }
  const decision: Decision = canonicalLabelMissingOrWrong ? { canonicalLabel: type } : {};

  if (rr.status?.data) {
    return { ...decision, status: withStatus({ type: CONDITION_SUCCEEDED, status: "True" }) };
  }

  const timeoutMs = world.config.maxResolutionTimeoutMs;
  const created = Date.parse(rr.metadata.creationTimestamp ?? "");
  const elapsed = Number.isNaN(created) ? 0 : world.now - created;
  if (elapsed >= timeoutMs) {
    const touched = touchedByResolver(rr);
    const message = touched
      ? `resolution took longer than global timeout of ${formatDuration(timeoutMs)}`
      : `no resolver for type ${type} answered within ${formatDuration(timeoutMs)}`;
    const reason = touched ? QuarryReason.TimedOut : QuarryReason.NoResolver;
    return {
      ...decision,
      status: withStatus(failed(REASON_RESOLUTION_TIMED_OUT, message), reason),
      event: { type: "Warning", reason: REASON_RESOLUTION_TIMED_OUT, message },
    };
  }

  const requeueAfterMs = timeoutMs - elapsed;
  if (!getCondition(rr.status, CONDITION_SUCCEEDED)) {
    return {
      ...decision,
      status: withStatus({
        type: CONDITION_SUCCEEDED,
        status: "Unknown",
        reason: REASON_RESOLUTION_IN_PROGRESS,
        message: MESSAGE_WAITING,
      }),
      requeueAfterMs,
    };
  }
  return { ...decision, requeueAfterMs };
}

/** A resolver has answered if it stamped the request or wrote anything beyond our initial condition. */
function touchedByResolver(rr: ResolutionRequest): boolean {
  if (rr.status?.annotations && Object.keys(rr.status.annotations).length > 0) return true;
  const c = getCondition(rr.status, CONDITION_SUCCEEDED);
  return c !== undefined && c.message !== undefined && c.message !== MESSAGE_WAITING;
}

function failed(reason: string, message: string): Condition {
  return { type: CONDITION_SUCCEEDED, status: "False", reason, message };
}
