// The lifecycle controller's own metric, next to the runtime's work-queue and bucket metrics.
import type { Meter } from "@quarry/observability";

/**
 * quarry_resolution_requests_timed_out_total{type, reason}: requests this controller ended with
 * ResolutionTimedOut, by resolver type and Quarry's reason (`NoResolver`: no resolver answered;
 * `TimedOut`: one answered but did not finish in time).
 */
export function timedOutCounter(meter: Meter): (type: string, reason: string) => void {
  const counter = meter.createCounter("quarry_resolution_requests_timed_out_total", {
    description:
      "ResolutionRequests the lifecycle controller timed out (no resolver finished them within the global timeout), by type and reason (NoResolver, TimedOut)",
  });
  return (type, reason) => counter.add(1, { type, reason });
}
