// Status transitions of a custom-task run, as plain functions of (run, now):
// each returns the status fields to write, never performs I/O. The reasons
// are Tekton's, per flavour (Run vs CustomRun), because Tekton's PipelineRun
// reconciler reads them.
import {
  type AnyRun,
  CONDITION_SUCCEEDED,
  type Condition,
  type RunResult,
  type RunStatus,
  rfc3339Seconds,
  runView,
  setCondition,
} from "@quarry/api";

/** Reasons both flavours share (Tekton's RunReason / CustomRunReason values). */
export const RunReason = {
  Started: "Started",
  Running: "Running",
  Succeeded: "Succeeded",
  Failed: "Failed",
} as const;

/** Status fields to merge into a run's status; `null` removes a field (JSON merge patch). */
export type StatusChange = { [K in keyof RunStatus]?: RunStatus[K] | null };

/** The run's conditions with Succeeded set; other conditions (another controller's) are kept. */
function withSucceeded(
  run: AnyRun,
  cond: Omit<Condition, "type" | "lastTransitionTime">,
  now: number,
): Condition[] {
  // empty reason and message are left out, as Tekton's knative conditions omit them
  const succeeded: Omit<Condition, "lastTransitionTime"> = {
    type: CONDITION_SUCCEEDED,
    status: cond.status,
    ...(cond.reason ? { reason: cond.reason } : {}),
    ...(cond.message ? { message: cond.message } : {}),
  };
  return setCondition(run.status?.conditions, succeeded, now);
}

export function markStarted(run: AnyRun, now: number, message = ""): StatusChange {
  return {
    startTime: run.status?.startTime ?? rfc3339Seconds(now),
    conditions: withSucceeded(run, { status: "Unknown", reason: RunReason.Started, message }, now),
  };
}

export function markRunning(
  run: AnyRun,
  now: number,
  message = "",
  extraFields?: Record<string, unknown>,
): StatusChange {
  const change: StatusChange = {
    conditions: withSucceeded(run, { status: "Unknown", reason: RunReason.Running, message }, now),
  };
  if (extraFields !== undefined) change.extraFields = extraFields;
  return change;
}

export function markSucceeded(
  run: AnyRun,
  now: number,
  opts: { reason?: string; message?: string; results?: RunResult[] } = {},
): StatusChange {
  const change: StatusChange = {
    conditions: withSucceeded(
      run,
      { status: "True", reason: opts.reason ?? RunReason.Succeeded, message: opts.message ?? "" },
      now,
    ),
    completionTime: rfc3339Seconds(now),
  };
  if (opts.results?.length) change.results = opts.results;
  return change;
}

export function markFailed(run: AnyRun, now: number, reason: string, message: string): StatusChange {
  return {
    conditions: withSucceeded(run, { status: "False", reason, message }, now),
    completionTime: rfc3339Seconds(now),
  };
}

export function markCancelled(run: AnyRun, now: number, message: string): StatusChange {
  return markFailed(run, now, runView(run).reasons.cancelled, message);
}

export function markTimedOut(run: AnyRun, now: number, message: string): StatusChange {
  return markFailed(run, now, runView(run).reasons.timedOut, message);
}

/** Attempts already made before the current one. */
export function retriesUsed(run: AnyRun): number {
  return run.status?.retriesStatus?.length ?? 0;
}

/** True while a failure of the current attempt should start another one. */
export function canRetry(run: AnyRun): boolean {
  return retriesUsed(run) < runView(run).retries;
}

/**
 * Ends the current attempt with the given failure and starts the next: the failed attempt
 * (without its own retriesStatus) is appended to retriesStatus, startTime restarts now, and the
 * run goes back to Unknown. Never False while retries remain.
 */
export function retry(run: AnyRun, now: number, reason: string, message: string): StatusChange {
  const { retriesStatus, childReferences: _c, provenance: _p, ...attempt } = run.status ?? {};
  const failed: RunStatus = {
    ...attempt,
    conditions: markFailed(run, now, reason, message).conditions ?? [],
    completionTime: rfc3339Seconds(now),
  };
  const used = (retriesStatus?.length ?? 0) + 1;
  return {
    retriesStatus: [...(retriesStatus ?? []), failed],
    startTime: rfc3339Seconds(now),
    completionTime: null,
    results: null,
    conditions: withSucceeded(
      run,
      {
        status: "Unknown",
        reason: RunReason.Running,
        message: `attempt ${used + 1} of ${runView(run).retries + 1} after ${reason}: ${message}`,
      },
      now,
    ),
  };
}
