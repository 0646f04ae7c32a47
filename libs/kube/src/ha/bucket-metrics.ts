// Bucket ownership as metrics, read at scrape time from the bucket set (or,
// with leader election off, one implicit bucket that is always held), so an
// operator can see which replica owns what and alert on buckets nobody holds
// (sum over replicas of quarry_buckets_held < quarry_buckets_total).
import type { Meter } from "@quarry/observability";
import type { BucketSet } from "./bucket-set.ts";

export interface BucketMetrics {
  gained(): void;
  lost(): void;
}

export function bucketMetrics(meter: Meter, buckets: BucketSet | undefined): BucketMetrics {
  meter
    .createObservableGauge("quarry_buckets_held", {
      description: "Buckets this replica leads (1 of 1 when leader election is off)",
    })
    .addCallback((r) => r.observe(buckets ? buckets.status().held.length : 1));
  meter
    .createObservableGauge("quarry_buckets_total", {
      description: "Buckets the service's keys are split into",
    })
    .addCallback((r) => r.observe(buckets?.count ?? 1));
  if (!buckets) return { gained: () => {}, lost: () => {} };
  meter
    .createObservableGauge("quarry_bucket_held", {
      description: "1 when this replica leads the bucket (its Lease name), else 0",
    })
    .addCallback((r) => {
      buckets.names.forEach((name, i) => {
        r.observe(buckets.holds(i) ? 1 : 0, { bucket: name });
      });
    });
  meter
    .createObservableGauge("quarry_leader_election_members", {
      description: "Live replicas competing for the service's buckets, as this replica sees them",
    })
    .addCallback((r) => r.observe(buckets.status().members));
  const changes = meter.createCounter("quarry_bucket_changes_total", {
    description: "Buckets this replica started (gained) or stopped (lost) leading",
  });
  return {
    gained: () => changes.add(1, { change: "gained" }),
    lost: () => changes.add(1, { change: "lost" }),
  };
}

/** A cache that skips other buckets' events (an Informer made with admit). */
export interface SkippingCache {
  readonly resource: string;
  status(): { skipped: number };
}

/** quarry_informer_events_skipped_total{resource}: what the bucketed caches dropped unparsed, read at scrape time. */
export function skippedEventsMetric(meter: Meter, caches: () => readonly SkippingCache[]): void {
  meter
    .createObservableCounter("quarry_informer_events_skipped_total", {
      description: "Watch events of keys outside the buckets this replica leads, dropped unparsed",
    })
    .addCallback((r) => {
      const byResource = new Map<string, number>();
      for (const c of caches())
        byResource.set(c.resource, (byResource.get(c.resource) ?? 0) + c.status().skipped);
      for (const [resource, n] of byResource) r.observe(n, { resource });
    });
}
