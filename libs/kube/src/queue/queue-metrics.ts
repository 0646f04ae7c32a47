// client-go's workqueue metrics as OpenTelemetry instruments, one series per
// controller (label `controller`). The queue itself only calls the plain
// WorkQueueMetrics callbacks; this is the one place that knows OTel.
import { type Meter, SECONDS_BUCKETS } from "@quarry/observability";
import type { WorkQueue, WorkQueueMetrics } from "./workqueue.ts";

export interface QueueOwner {
  readonly name: string;
  readonly queue: WorkQueue;
}

/**
 * Creates the instruments once and returns a factory of per-controller sinks. Gauges are read at
 * scrape time from `owners()` (the runtime's controllers), so they need no bookkeeping.
 */
export function workQueueMetrics(
  meter: Meter,
  owners: () => Iterable<QueueOwner>,
): (controller: string) => WorkQueueMetrics {
  const adds = meter.createCounter("quarry_workqueue_adds_total", {
    description: "Keys added to a controller's work queue (adds of an already queued key not counted)",
  });
  const retries = meter.createCounter("quarry_workqueue_retries_total", {
    description: "Keys re-added with backoff after a failed reconcile",
  });
  const buckets = { advice: { explicitBucketBoundaries: [...SECONDS_BUCKETS] }, unit: "s" };
  const queueDuration = meter.createHistogram("quarry_workqueue_queue_duration_seconds", {
    description: "Time a key waited in the work queue before a worker took it",
    ...buckets,
  });
  const workDuration = meter.createHistogram("quarry_workqueue_work_duration_seconds", {
    description: "Time a worker spent on a key (one reconcile)",
    ...buckets,
  });
  const gauge = (name: string, description: string, read: (q: WorkQueue) => number) =>
    meter.createObservableGauge(name, { description }).addCallback((result) => {
      for (const o of owners()) result.observe(read(o.queue), { controller: o.name });
    });
  gauge("quarry_workqueue_depth", "Keys waiting in a controller's work queue", (q) => q.depth());
  gauge(
    "quarry_workqueue_unfinished_work_seconds",
    "Seconds the keys being processed have been running, summed; grows while a reconcile hangs",
    (q) => q.unfinishedWork().totalSeconds,
  );
  gauge(
    "quarry_workqueue_longest_running_processor_seconds",
    "Seconds the longest-running reconcile in flight has been running",
    (q) => q.unfinishedWork().longestSeconds,
  );
  return (controller) => {
    const attrs = { controller };
    return {
      add: () => adds.add(1, attrs),
      retry: () => retries.add(1, attrs),
      queueDuration: (s) => queueDuration.record(s, attrs),
      workDuration: (s) => workDuration.record(s, attrs),
    };
  };
}
