import type { Meter } from "@quarry/observability";
import { SECONDS_BUCKETS } from "@quarry/observability";

/** pending: a step of a slow resolution ended without an answer yet (the worker was released). */
export type Outcome = "succeeded" | "failed" | "retried" | "cancelled" | "pending";

export interface ResolverMetrics {
  duration(type: string, outcome: Outcome, seconds: number): void;
  cache(type: string, result: "hit" | "miss" | "bypass"): void;
  inflight(type: string, delta: 1 | -1): void;
  /** A failure this resolver wrote on a request, by its reason (NotFound, Forbidden, SourceUnavailable, …). */
  failure(type: string, reason: string): void;
}

export function resolverMetrics(meter: Meter): ResolverMetrics {
  const duration = meter.createHistogram("quarry_resolution_duration_seconds", {
    description: "Time from picking a request up to writing its outcome",
    advice: { explicitBucketBoundaries: [...SECONDS_BUCKETS] },
  });
  const cache = meter.createCounter("quarry_resolution_cache_total", {
    description: "Result cache lookups by result (bypass: the cache mode excluded this request)",
  });
  const inflight = meter.createUpDownCounter("quarry_requests_inflight", {
    description: "Resolutions in progress",
  });
  const failures = meter.createCounter("quarry_resolution_failures_total", {
    description: "Requests this resolver failed, by the reason it wrote (Succeeded=False)",
  });
  return {
    failure: (type, reason) => failures.add(1, { type, reason }),
    duration: (type, outcome, seconds) => duration.record(seconds, { type, outcome }),
    cache: (type, result) => cache.add(1, { type, result }),
    inflight: (type, delta) => inflight.add(delta, { type }),
  };
}
