// A resolver's own view of a measured phase, from its /metrics before and
// after (the SDK's quarry_resolution_* series): how long it took from picking
// a request up to writing the outcome, outcomes, result-cache lookups.
import type { PhaseResult } from "./phase.ts";
import { bucketQuantile, promBuckets, promSum } from "./prom.ts";
import { round } from "./stats.ts";

export interface ResolverView {
  outcomes: Record<string, number>;
  /** mean is exact; p50/p90 are interpolated within the histogram's buckets */
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  /** SDK result cache lookups by result (hit, miss, bypass) */
  cache: Record<string, number>;
}

/** after − before of a metric's samples matching `match`, in one service's window of a phase. */
export function metricDelta(
  phase: PhaseResult,
  service: string,
  metric: string,
  match: Record<string, string> = {},
): number {
  const w = phase.services[service];
  if (!w) return Number.NaN;
  return promSum(w.metricsAfter, metric, match) - promSum(w.metricsBefore, metric, match);
}

export function resolverView(phase: PhaseResult, service: string, type: string): ResolverView | undefined {
  const w = phase.services[service];
  if (!w?.metricsAfter) return undefined;
  const m = "quarry_resolution_duration_seconds";
  const d = (metric: string, match: Record<string, string>) => metricDelta(phase, service, metric, match);
  const outcomes: Record<string, number> = {};
  for (const outcome of ["succeeded", "failed", "retried", "cancelled"]) {
    const n = d(`${m}_count`, { type, outcome });
    if (n) outcomes[outcome] = n;
  }
  const ok = { type, outcome: "succeeded" };
  const count = d(`${m}_count`, ok);
  const before = promBuckets(w.metricsBefore, m, ok);
  const after = promBuckets(w.metricsAfter, m, ok);
  const cache: Record<string, number> = {};
  for (const result of ["hit", "miss", "bypass"]) {
    const n = d("quarry_resolution_cache_total", { type, result });
    if (n) cache[result] = n;
  }
  return {
    outcomes,
    meanMs: count ? round((d(`${m}_sum`, ok) / count) * 1000, 1) : Number.NaN,
    p50Ms: round(bucketQuantile(before, after, 0.5) * 1000, 1),
    p90Ms: round(bucketQuantile(before, after, 0.9) * 1000, 1),
    cache,
  };
}

/** A level-triggered resolver's steps of one outcome (`pending`: waiting on its children) in a phase. */
export function stepView(
  phase: PhaseResult,
  service: string,
  type: string,
  outcome: string,
  requests: number,
): { perRequest: number; meanMs: number } {
  const match = { type, outcome };
  const count = metricDelta(phase, service, "quarry_resolution_duration_seconds_count", match);
  const seconds = metricDelta(phase, service, "quarry_resolution_duration_seconds_sum", match);
  return { perRequest: round(count / requests, 2), meanMs: count ? round((seconds / count) * 1000, 1) : 0 };
}

/** How long keys waited in a controller's work queue for a worker, on average, in a phase. */
export function meanQueueWaitMs(phase: PhaseResult, service: string, controller: string): number {
  const m = "quarry_workqueue_queue_duration_seconds";
  const waits = metricDelta(phase, service, `${m}_count`, { controller });
  return waits ? round((metricDelta(phase, service, `${m}_sum`, { controller }) / waits) * 1000, 1) : 0;
}
