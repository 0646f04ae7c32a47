// Which keys this replica reconciles under HA by buckets, and what its queues
// and caches do when a bucket changes hands: a gained bucket's keys are
// enqueued again from the caches (only that bucket's keys get in while they
// replay), a lost bucket's keys leave every queue, and a bucket handed over
// waits for its reconciles in flight. With leader election off every key is
// this replica's.
import type { Logger, Meter } from "@quarry/observability";
import type { KubeClient } from "../client/client.ts";
import { type BucketMetrics, bucketMetrics } from "./bucket-metrics.ts";
import { BucketSet, type BucketStatus } from "./bucket-set.ts";
import type { LeaderElectionSettings } from "./leader-settings.ts";

/** A cache a gained bucket replays (an Informer). */
export interface ReplayableCache {
  replay(): void;
}

/** A controller whose queue a bucket's keys enter and leave (a Controller). */
export interface KeyedQueue {
  drop(match: (key: string) => boolean): number;
  idle(match: (key: string) => boolean): Promise<void>;
}

export interface BucketOwnershipOptions {
  client: KubeClient;
  /** Where the Leases live: the service's own namespace. */
  namespace: string;
  service: string;
  /** Off (every key owned) when undefined or not enabled. */
  leaderElection: LeaderElectionSettings | undefined;
  log: Logger;
  meter: Meter;
  /** How long a handover waits for the bucket's reconciles in flight: as long as a SIGTERM drain. */
  drainBudgetMs: number;
  caches: () => readonly ReplayableCache[];
  controllers: () => readonly KeyedQueue[];
}

export class BucketOwnership {
  /** The buckets this replica competes for; undefined when leader election is off. */
  readonly buckets: BucketSet | undefined;
  private readonly metrics: BucketMetrics;
  private readonly log: Logger;
  private readonly drainBudgetMs: number;
  private readonly caches: () => readonly ReplayableCache[];
  private readonly controllers: () => readonly KeyedQueue[];
  /** While a gained bucket's keys are replayed: only that bucket's keys are enqueued. */
  private replaying: number | undefined;
  private replayed = 0;

  constructor(opts: BucketOwnershipOptions) {
    this.log = opts.log;
    this.drainBudgetMs = opts.drainBudgetMs;
    this.caches = opts.caches;
    this.controllers = opts.controllers;
    const le = opts.leaderElection;
    this.buckets = le?.enabled
      ? new BucketSet({
          client: opts.client,
          namespace: opts.namespace,
          service: opts.service,
          identity: le.identity,
          count: le.buckets,
          timing: le.timing,
          ...(le.ownerConfigMap && { ownerConfigMap: le.ownerConfigMap }),
          log: opts.log,
          onGained: (i) => this.promote(i),
          onLost: (i) => this.demote(i),
          drain: (i) => this.drain(i),
        })
      : undefined;
    this.metrics = bucketMetrics(opts.meter, this.buckets);
  }

  /** Whether this replica reconciles `key`: always without leader election, else when it leads the key's bucket. */
  owns(key: string): boolean {
    const b = this.buckets;
    if (!b) return true;
    if (!b.owns(key)) return false;
    if (this.replaying === undefined) return true;
    if (b.bucketOf(key) !== this.replaying) return false;
    this.replayed++;
    return true;
  }

  status(): BucketStatus | undefined {
    return this.buckets?.status();
  }

  /** Starts competing for buckets; after the caches synced, so a bucket gained replays a complete cache. */
  async start(): Promise<void> {
    await this.buckets?.start();
  }

  /** Releases the Leases held; after the drain, so no reconcile of a bucket runs once a peer may have taken it. */
  async stop(): Promise<void> {
    await this.buckets?.stop();
  }

  /** A gained bucket: every cache hands its objects to its handlers again; only that bucket's keys get in. */
  private promote(index: number): void {
    this.metrics.gained();
    this.replaying = index;
    this.replayed = 0;
    try {
      for (const c of this.caches()) c.replay();
    } finally {
      this.replaying = undefined;
    }
    this.log.info(
      { bucket: this.buckets?.names[index], keys: this.replayed },
      "bucket gained, its keys enqueued",
    );
  }

  /** A lost bucket: its keys leave every queue; reconciles in flight finish (their writes are locked). */
  private demote(index: number): void {
    this.metrics.lost();
    const inBucket = (key: string) => this.buckets?.bucketOf(key) === index;
    const dropped = this.controllers().reduce((n, c) => n + c.drop(inBucket), 0);
    this.log.info({ bucket: this.buckets?.names[index], dropped }, "bucket lost, its keys dropped");
  }

  /** Work in flight of a bucket being handed over, waited for as long as a SIGTERM drain may take. */
  private async drain(index: number): Promise<void> {
    const inBucket = (key: string) => this.buckets?.bucketOf(key) === index;
    let cancel: NodeJS.Timeout | undefined;
    const budget = new Promise<void>((resolve) => {
      cancel = setTimeout(resolve, this.drainBudgetMs);
    });
    await Promise.race([Promise.all(this.controllers().map((c) => c.idle(inBucket))), budget]);
    clearTimeout(cancel);
  }
}
