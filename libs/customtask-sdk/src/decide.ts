// The SDK's decisions, as plain functions of (run, task, world): whether a
// run is the task's, whether it must be started, cancelled, timed out or
// retried before the author's code runs, and how the author's Step becomes a
// status change. No I/O here; reconciler.ts performs what these return.
import {
  type AnyRun,
  CONDITION_SUCCEEDED,
  getCondition,
  isDone,
  type JsonLike,
  type ParamDeclaration,
  type ParamValue,
  type RunView,
  resolveParams,
  runView,
  substitute,
} from "@quarry/api";
import { formatDuration, parseDuration } from "@quarry/kube";
import {
  canRetry,
  markCancelled,
  markFailed,
  markRunning,
  markStarted,
  markSucceeded,
  markTimedOut,
  retriesUsed,
  retry,
  type StatusChange,
} from "./status.ts";
import type { CustomTask, Step } from "./task.ts";

export interface TaskWorld {
  now: number;
  /** Used when spec.timeout is unset (Tekton: 60m). */
  defaultTimeoutMs: number;
}

export interface StatusWrite {
  change: StatusChange;
  /** Reconcile again after this long (0: at once, to carry on from the new state). */
  requeueAfterMs?: number;
  /** Tell the task to clean up: the run ended without it. */
  stop?: "cancelled" | "timedOut";
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
}

export type TaskDecision =
  | { type: "skip" }
  | { type: "write"; write: StatusWrite }
  | {
      type: "invoke";
      params: Record<string, ParamValue>;
      /** The run as the task sees it, when this decision also starts it (its startTime set). */
      run?: AnyRun;
      /** Status fields to write with the task's own step (the start, when this decision starts it). */
      base?: StatusChange;
      /** The embedded spec with the run's params substituted; undefined for a ref. */
      spec: Record<string, unknown> | undefined;
      startedAt: number;
      timeoutMs: number;
      /** ms until the timeout of this attempt; undefined without a timeout. */
      remainingMs: number | undefined;
    };

/** A run is the task's when its ref or embedded spec names the task's group (any version) and kind. */
export function servesRun(task: Pick<CustomTask, "group" | "kind">, view: RunView): boolean {
  const { apiVersion, kind } = view.target;
  if (kind !== task.kind || !apiVersion) return false;
  const slash = apiVersion.indexOf("/");
  return slash > 0 && apiVersion.slice(0, slash) === task.group;
}

/** ms of spec.timeout: unset → the default, "0"/"0s" → 0 (no timeout), malformed → an error message. */
export function runTimeoutMs(
  run: AnyRun,
  defaultMs: number,
): { ok: true; ms: number } | { ok: false; message: string } {
  const text = run.spec?.timeout;
  if (text === undefined || text === null) return { ok: true, ms: defaultMs };
  if (typeof text !== "string") return { ok: false, message: `spec.timeout must be a duration string` };
  if (text.trim().startsWith("-")) return { ok: false, message: `spec.timeout "${text}" is negative` };
  try {
    return { ok: true, ms: parseDuration(text) };
  } catch {
    return { ok: false, message: `spec.timeout "${text}" is not a duration such as "1m30s"` };
  }
}

function failNow(run: AnyRun, now: number, reason: string, message: string): TaskDecision {
  return {
    type: "write",
    write: { change: markFailed(run, now, reason, message), event: { type: "Warning", reason, message } },
  };
}

/** Tekton's wording for a run that ran past its timeout (as its TaskRun message). */
export function timeoutMessage(run: AnyRun, timeoutMs: number): string {
  return `${run.kind} "${run.metadata.name}" failed to finish within "${formatDuration(timeoutMs)}"`;
}

/** The cancel message: what the canceller said (Tekton's PipelineRun says why), else ours. */
export function cancelMessage(run: AnyRun): string {
  return run.spec?.statusMessage || `${run.kind} "${run.metadata.name}" was cancelled`;
}

export function decideTask(run: AnyRun, task: CustomTask, world: TaskWorld): TaskDecision {
  if (!servesRun(task, runView(run)) || isDone(run)) return { type: "skip" };
  if (run.status?.startTime && getCondition(run, CONDITION_SUCCEEDED)) return decideStarted(run, task, world);
  // Initialise, and in the same write say what the run is now (Tekton's Wait writes Started and
  // Running as one update, too): the initial-update timeout of TEP-0002 never fires on a run we
  // serve, whatever else is wrong with it, and a start costs one write, not two.
  const started = markStarted(run, world.now);
  const startedRun = { ...run, status: { ...run.status, ...started } } as AnyRun;
  const next = decideStarted(startedRun, task, world);
  if (next.type === "write")
    return { type: "write", write: { ...next.write, change: { ...started, ...next.write.change } } };
  if (next.type === "invoke") return { ...next, run: startedRun, base: started };
  return { type: "write", write: { change: started, requeueAfterMs: 0 } };
}

/**
 * When an attempt started, as the task should count it: the end of startTime's second when the
 * stamp is whole seconds (as Kubernetes writes times), so a wait or a timeout never ends early.
 */
export function attemptStart(startTime: string): number {
  const t = Date.parse(startTime);
  return /\.\d/.test(startTime) ? t : t + 1000;
}

function decideStarted(run: AnyRun, task: CustomTask, world: TaskWorld): TaskDecision {
  const view = runView(run);
  const { now } = world;
  if (!run.status?.startTime) return { type: "skip" };
  if (view.cancelRequested) {
    const message = cancelMessage(run);
    return {
      type: "write",
      write: {
        change: markCancelled(run, now, message),
        stop: "cancelled",
        event: { type: "Normal", reason: view.reasons.cancelled, message },
      },
    };
  }
  const timeout = runTimeoutMs(run, world.defaultTimeoutMs);
  if (!timeout.ok) return failNow(run, now, "InvalidTimeout", timeout.message);
  if (view.ref?.name && !task.allowsRefName)
    return failNow(
      run,
      now,
      "UnexpectedName",
      `${task.kind} takes no named definition, found ref name "${view.ref.name}"`,
    );

  const startedAt = attemptStart(run.status.startTime);
  const elapsed = now - startedAt;
  if (timeout.ms > 0 && elapsed > timeout.ms) {
    const message = timeoutMessage(run, timeout.ms);
    const change = canRetry(run)
      ? retry(run, now, view.reasons.timedOut, message)
      : markTimedOut(run, now, message);
    return {
      type: "write",
      write: {
        change,
        stop: "timedOut",
        requeueAfterMs: canRetry(run) ? 0 : undefined,
        event: { type: "Warning", reason: view.reasons.timedOut, message },
      },
    };
  }

  const prepared = prepareParams(task, view);
  if (!prepared.ok) return failNow(run, now, prepared.reason, prepared.message);
  return {
    type: "invoke",
    params: prepared.params,
    spec: prepared.spec,
    startedAt,
    timeoutMs: timeout.ms,
    remainingMs: timeout.ms > 0 ? Math.max(0, timeout.ms - elapsed) : undefined,
  };
}

/** How the author's Step becomes a status change for this attempt. */
export function applyStep(
  run: AnyRun,
  step: Step,
  now: number,
  remainingMs: number | undefined,
): StatusWrite {
  const write = stepWrite(run, step, now, remainingMs);
  if (step.childReferences) write.change.childReferences = step.childReferences;
  return write;
}

function stepWrite(run: AnyRun, step: Step, now: number, remainingMs: number | undefined): StatusWrite {
  switch (step.type) {
    case "running": {
      // wake at the author's time or just past the timeout, whichever is first
      const wake = [step.requeueAfterMs, remainingMs === undefined ? undefined : remainingMs + 1].filter(
        (x): x is number => x !== undefined,
      );
      return {
        change: markRunning(run, now, step.message ?? "", step.extraFields),
        requeueAfterMs: wake.length ? Math.max(0, Math.min(...wake)) : undefined,
      };
    }
    case "succeeded":
      return {
        change: markSucceeded(run, now, step),
        event: { type: "Normal", reason: step.reason ?? "Succeeded", message: step.message ?? "" },
      };
    case "failed": {
      if (step.retryable !== false && canRetry(run)) {
        return {
          change: retry(run, now, step.reason, step.message),
          requeueAfterMs: 0,
          event: {
            type: "Warning",
            reason: step.reason,
            message: `attempt ${retriesUsed(run) + 1} failed, retrying: ${step.message}`,
          },
        };
      }
      return {
        change: markFailed(run, now, step.reason, step.message),
        event: { type: "Warning", reason: step.reason, message: step.message },
      };
    }
  }
}

/** Param declarations an embedded spec carries under `params` (Tekton's ParamSpec shape). */
function declaredIn(spec: Record<string, unknown> | undefined): ParamDeclaration[] {
  const list = spec?.params;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (p): p is ParamDeclaration => typeof (p as { name?: unknown } | null)?.name === "string",
  );
}

/**
 * The run's params checked against what the task and the embedded spec declare (defaults applied,
 * unknown, missing and mistyped params refused), and the embedded spec with `$(params.…)`
 * substituted once (a value that itself reads `$(params.x)` is inserted as it is, never expanded
 * again). Without declarations and without an embedded spec, params are the task's to check.
 */
export function prepareParams(
  task: Pick<CustomTask, "params">,
  view: RunView,
):
  | { ok: true; params: Record<string, ParamValue>; spec: Record<string, unknown> | undefined }
  | { ok: false; reason: string; message: string } {
  const embedded = view.embedded?.spec;
  const declared = [...(task.params ?? []), ...declaredIn(embedded)];
  if (!task.params && !embedded) return { ok: true, params: {}, spec: undefined };
  const checked = resolveParams(declared, view.params);
  if (!checked.ok) return checked;
  const params = Object.fromEntries(checked.values);
  if (!embedded) return { ok: true, params, spec: undefined };
  const substituted = substitute(embedded as JsonLike, checked.values);
  if (!substituted.ok) return substituted;
  return { ok: true, params, spec: substituted.value as Record<string, unknown> };
}
