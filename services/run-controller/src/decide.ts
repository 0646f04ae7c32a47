// The run-controller's decisions as a plain function of (run, world): which
// ResolutionRequest a remote ref needs, which references and provenance the
// run's status should record, and whether the custom-task contract must be
// enforced (TEP-0002's initial-update timeout, a cancel or timeout the owning
// controller did not honour within the grace period). No I/O here.

import {
  type AnyRun,
  type ChildReference,
  CONDITION_SUCCEEDED,
  getCondition,
  isDone,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
  type RefSource,
  type ResolutionRequest,
  runView,
  targetName,
} from "@quarry/api";
import {
  attemptStart,
  cancelMessage,
  markCancelled,
  markFailed,
  markTimedOut,
  remoteRequest,
  runTimeoutMs,
  type StatusChange,
  timeoutMessage,
} from "@quarry/customtask-sdk/internal";
import { formatDuration } from "@quarry/kube";
import { type RequestResolutionInput, readOutcome, requestDifferences } from "@quarry/requester";
import { policyFor, type RunControllerConfig } from "./config.ts";
import { ReasonInvalidRunSpec, runSpecProblem } from "./validate.ts";

export const ReasonControllerNotFound = "ControllerNotFound";

/** status.annotations key: the name of the run's ResolutionRequest. */
export const ANNOTATION_RUN_REQUEST = "quarry.dev/resolution-request";
/** status.annotations key: the request's refSource as JSON (what exactly ran). */
export const ANNOTATION_RUN_REF_SOURCE = "quarry.dev/ref-source";

export interface RunWorld {
  now: number;
  config: RunControllerConfig;
  /** The run's ResolutionRequest (by its deterministic name), if it exists. */
  request: ResolutionRequest | undefined;
  /**
   * Set when a different request already holds the run's name (what differs): it is not the
   * run's child, and a run nobody has picked up fails instead of waiting on it.
   */
  requestConflict?: string | undefined;
  /** When the cancel was first seen (ms); the grace period counts from here. */
  cancelSeenAt: number | undefined;
}

export interface Enforcement {
  reason: string;
  message: string;
  /** Why Quarry stepped in, for the Event (the condition keeps Tekton's message). */
  why: string;
}

export interface RunDecision {
  /** Create (or adopt) the run's ResolutionRequest. */
  createRequest?: RequestResolutionInput;
  /** Status fields to write (Quarry's own fields, an enforcement, or both). */
  status?: StatusChange;
  enforcement?: Enforcement;
  requeueAfterMs?: number;
}

const ms = (iso: string | undefined): number | undefined => {
  const t = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(t) ? undefined : t;
};

/**
 * When a period that starts at an apiserver-stamped event (creation, the cancel) starts at the
 * earliest: such stamps have whole seconds and are truncated, so the event happened up to 1s after
 * a stamp without a fraction. Counting from the stamp itself would cut the period short by up to 1s.
 */
const eventTime = (iso: string | undefined): number | undefined =>
  ms(iso) === undefined ? undefined : attemptStart(iso ?? "");

/** childReferences with the request added (others, e.g. a task's own children, kept). */
function withChild(current: ChildReference[] | undefined, name: string): ChildReference[] | undefined {
  const list = current ?? [];
  if (list.some((c) => c.kind === RESOLUTION_REQUEST_KIND && c.name === name)) return undefined;
  return [...list, { apiVersion: RESOLUTION_V1BETA1, kind: RESOLUTION_REQUEST_KIND, name }];
}

function provenanceOf(rr: ResolutionRequest | undefined): RefSource | undefined {
  if (!rr) return undefined;
  const outcome = readOutcome(rr);
  return outcome.state === "resolved" ? outcome.refSource : undefined;
}

/** What the contract says about a run that is not done; undefined while nothing is due. */
function enforce(
  run: AnyRun,
  world: RunWorld,
  due: (at: number) => boolean,
): { enforcement: Enforcement; change: StatusChange } | undefined {
  const view = runView(run);
  const policy = policyFor(world.config, view.target);
  const grace = formatDuration(policy.graceMs);
  const cancelled = (why: string) => {
    const message = cancelMessage(run);
    return {
      change: markCancelled(run, world.now, message),
      enforcement: { reason: view.reasons.cancelled, message, why },
    };
  };
  if (view.cancelRequested && world.cancelSeenAt !== undefined && due(world.cancelSeenAt + policy.graceMs)) {
    return cancelled(
      `cancel requested and the controller of ${targetName(view)} did not stop the run within ${grace}`,
    );
  }
  const initialised = getCondition(run, CONDITION_SUCCEEDED) !== undefined;
  if (!initialised) {
    const created = eventTime(run.metadata.creationTimestamp) ?? world.now;
    if (!due(created + policy.initialUpdateTimeoutMs)) return undefined;
    const within = formatDuration(policy.initialUpdateTimeoutMs);
    // the user's cancel wins over a missing controller: a PipelineRun cancelled early reports Cancelled
    if (view.cancelRequested) {
      return cancelled(
        `cancel requested and no controller initialised the status of this ${run.kind} within ${within}`,
      );
    }
    const message = `no controller initialised the status of this ${run.kind} within ${within}: nothing handles ${targetName(view)}`;
    return {
      change: markFailed(run, world.now, ReasonControllerNotFound, message),
      enforcement: { reason: ReasonControllerNotFound, message, why: message },
    };
  }
  const started = eventTime(run.status?.startTime);
  const timeout = runTimeoutMs(run, world.config.defaultTimeoutMs);
  if (started === undefined || !timeout.ok || timeout.ms === 0) return undefined;
  // Tekton: timed out once strictly more than the timeout has passed
  if (!due(started + timeout.ms + 1 + policy.graceMs)) return undefined;
  const message = timeoutMessage(run, timeout.ms);
  return {
    change: markTimedOut(run, world.now, message),
    enforcement: {
      reason: view.reasons.timedOut,
      message,
      why: `timed out and the controller of ${targetName(view)} did not end the run within ${grace}`,
    },
  };
}

/** The run's next step. Idempotent: from the state it produces, it decides nothing more. */
export function decide(run: AnyRun, world: RunWorld): RunDecision {
  const decision: RunDecision = {};
  const status: StatusChange = {};
  const done = isDone(run);
  const view = runView(run);
  const policy = policyFor(world.config, view.target);
  const remote = remoteRequest(run);
  const uninitialised = getCondition(run, CONDITION_SUCCEEDED) === undefined;
  // a spec nobody can act on fails the run below, at once: no resolver is asked for its definition
  const problem = !done && policy.enabled && uninitialised ? runSpecProblem(run) : undefined;

  // a cached request under the run's name that asks for something else is not the run's
  const conflict =
    remote.type === "request"
      ? (world.requestConflict ??
          (world.request && requestDifferences(world.request, remote.input).join("; ")) ??
          undefined) ||
        undefined
      : undefined;
  if (remote.type === "request" && !conflict) {
    if (!world.request && !done && !problem) decision.createRequest = remote.input;
    // Recorded twice: TEP-0100's childReferences and TaskRun-style provenance where the CRD keeps
    // them (Quarry's, Tekton's schemaless ones), and status.annotations, which every Tekton schema
    // keeps (v0.70+'s structural CustomRun CRD prunes the other two). The annotations decide
    // whether anything is left to write, so a pruning schema never causes a write loop.
    const annotations = run.status?.annotations ?? {};
    const recorded: Record<string, string> = {};
    // only a request that exists or is being created now is a child (a done run gets none)
    const isChild = world.request !== undefined || decision.createRequest !== undefined;
    if (isChild && annotations[ANNOTATION_RUN_REQUEST] !== remote.name) {
      recorded[ANNOTATION_RUN_REQUEST] = remote.name;
      status.childReferences =
        withChild(run.status?.childReferences, remote.name) ?? run.status?.childReferences ?? [];
    }
    const refSource = provenanceOf(world.request);
    if (refSource && annotations[ANNOTATION_RUN_REF_SOURCE] !== JSON.stringify(refSource)) {
      recorded[ANNOTATION_RUN_REF_SOURCE] = JSON.stringify(refSource);
      status.provenance = { refSource };
    }
    if (Object.keys(recorded).length) status.annotations = { ...annotations, ...recorded };
  }

  if (!done && policy.enabled) {
    // a definition that can never be resolved ends a run nobody has picked up yet; a controller
    // already managing the run reads the failure itself (customtask-sdk's resolvedRef)
    const failed =
      remote.type === "request" && world.request && !conflict ? readOutcome(world.request) : undefined;
    if (problem) {
      Object.assign(status, markFailed(run, world.now, ReasonInvalidRunSpec, problem));
      decision.enforcement = { reason: ReasonInvalidRunSpec, message: problem, why: problem };
    } else if (uninitialised && conflict && remote.type === "request") {
      const message = `ResolutionRequest ${remote.name} already exists and asks for something else (${conflict}); it is not this run's`;
      Object.assign(status, markFailed(run, world.now, "ResolutionFailed", message));
      decision.enforcement = { reason: "ResolutionFailed", message, why: message };
    } else if (uninitialised && (remote.type === "invalid" || failed?.state === "failed")) {
      const message =
        remote.type === "invalid"
          ? remote.message
          : `ResolutionRequest ${remote.type === "request" ? remote.name : ""} failed: ${
              failed?.state === "failed"
                ? `${failed.quarryReason ? `${failed.quarryReason}: ` : ""}${failed.message}`
                : ""
            }`;
      Object.assign(status, markFailed(run, world.now, "ResolutionFailed", message));
      decision.enforcement = { reason: "ResolutionFailed", message, why: message };
    } else {
      const enforced = enforce(run, world, (at) => at <= world.now);
      if (enforced) {
        Object.assign(status, enforced.change);
        decision.enforcement = enforced.enforcement;
      } else {
        decision.requeueAfterMs = nextDeadline(run, world);
      }
    }
  }
  if (Object.keys(status).length) decision.status = status;
  return decision;
}

/** ms until the earliest enforcement could fall due, so the run is looked at exactly then. */
function nextDeadline(run: AnyRun, world: RunWorld): number | undefined {
  const view = runView(run);
  const policy = policyFor(world.config, view.target);
  const deadlines: number[] = [];
  if (view.cancelRequested && world.cancelSeenAt !== undefined)
    deadlines.push(world.cancelSeenAt + policy.graceMs);
  if (getCondition(run, CONDITION_SUCCEEDED) === undefined) {
    deadlines.push((eventTime(run.metadata.creationTimestamp) ?? world.now) + policy.initialUpdateTimeoutMs);
  } else {
    const started = eventTime(run.status?.startTime);
    const timeout = runTimeoutMs(run, world.config.defaultTimeoutMs);
    if (started !== undefined && timeout.ok && timeout.ms > 0)
      deadlines.push(started + timeout.ms + 1 + policy.graceMs);
  }
  if (!deadlines.length) return undefined;
  return Math.max(0, Math.min(...deadlines) - world.now);
}

/**
 * When spec.status was set, from the apiserver's managedFields: the time of the last write of
 * the manager that owns `spec.status`. Never earlier than the cancel itself, so the grace period
 * is never cut short; undefined when the object carries no managedFields.
 */
export function cancelRequestedAt(run: AnyRun): number | undefined {
  const entries = (run.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [];
  let at: number | undefined;
  for (const e of entries) {
    const spec = e.fieldsV1?.["f:spec"] as Record<string, unknown> | undefined;
    if (!spec || !("f:status" in spec) || e.subresource) continue;
    const t = eventTime(e.time);
    if (t !== undefined && (at === undefined || t > at)) at = t;
  }
  return at;
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: string;
  fieldsV1?: Record<string, unknown>;
}
