// Which keys this replica reconciles under HA by buckets, and what its queues
// and caches do when a bucket changes hands. The caches keyed like the work
// (a resolver's requests) hold only the admitted buckets' keys: other keys'
// watch events are skipped unparsed, so a replica spends almost nothing on
// requests outside its buckets. A gained bucket is admitted once this
// replica's own reconciles of its keys from an earlier term have ended, then
// those caches list again (its keys reach their handlers as adds) and the
// other caches replay (only that bucket's keys get in while they replay); a lost bucket's keys leave every queue and those
// caches at once; a bucket handed over waits for its reconciles in flight.
// With leader election off every key is this replica's.

import { shardSelector } from "@quarry/api";
import type { Logger, Meter } from "@quarry/observability";
import type { KubeClient } from "../client/client.ts";
import { shardsOf } from "./bucket-hash.ts";
import { type BucketMetrics, bucketMetrics } from "./bucket-metrics.ts";
import { BucketSet, type BucketStatus } from "./bucket-set.ts";
import type { LeaderElectionSettings } from "./leader-settings.ts";

/** A cache a gained bucket replays (an Informer). */
export interface ReplayableCache {
  replay(): void;
}

/** A cache holding only admitted keys (an Informer made with admit). */
export interface FilteredCache {
  refill(): Promise<void>;
  evict(match: (key: string) => boolean): number;
  /** Watches again with the narrowed label selector (after a bucket was lost). */
  rewatch(): void;
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
  /** The caches made with `admit: (key) => ownership.admits(key)`: refilled and evicted per bucket. */
  filtered: () => readonly FilteredCache[];
  controllers: () => readonly KeyedQueue[];
}

export class BucketOwnership {
  /** The buckets this replica competes for; undefined when leader election is off. */
  readonly buckets: BucketSet | undefined;
  private readonly metrics: BucketMetrics;
  private readonly log: Logger;
  private readonly drainBudgetMs: number;
  private readonly caches: () => readonly ReplayableCache[];
  private readonly filtered: () => readonly FilteredCache[];
  private readonly controllers: () => readonly KeyedQueue[];
  private readonly shardLabel: boolean;
  /** Buckets held and admitted: their earlier term's reconciles ended, their keys are cached. */
  private readonly admitted = new Set<number>();
  /** Bumped on every gain and loss, so an admission that waited knows whether it still stands. */
  private readonly terms = new Map<number, number>();
  /** While a gained bucket's keys are replayed: only that bucket's keys are enqueued. */
  private replaying: number | undefined;
  private replayed = 0;

  constructor(opts: BucketOwnershipOptions) {
    this.log = opts.log;
    this.drainBudgetMs = opts.drainBudgetMs;
    this.caches = opts.caches;
    this.filtered = opts.filtered;
    this.controllers = opts.controllers;
    const le = opts.leaderElection;
    this.shardLabel = le?.shardLabel ?? false;
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
    if (!this.admits(key)) return false;
    if (this.replaying === undefined) return true;
    if (b.bucketOf(key) !== this.replaying) return false;
    this.replayed++;
    return true;
  }

  /** Whether a filtered cache holds `key`: always without leader election, else when its bucket is admitted. */
  admits(key: string): boolean {
    const b = this.buckets;
    return !b || this.admitted.has(b.bucketOf(key));
  }

  /**
   * With QUARRY_SHARD_LABEL on, the label selector of the shards admitted here (and of unlabelled
   * objects): the apiserver sends this replica only its buckets' labelled requests.
   */
  labelSelector(): string | undefined {
    const b = this.buckets;
    if (!b || !this.shardLabel) return undefined;
    return shardSelector(shardsOf(this.admitted, b.count));
  }

  /** Whether every key is admitted: no leader election, or every bucket admitted here. */
  admitsAll(): boolean {
    const b = this.buckets;
    return !b || this.admitted.size === b.count;
  }

  /** Resolves once every bucket held is admitted (tests, benchmarks). */
  async settled(): Promise<void> {
    await Promise.all(this.admitting.values());
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

  private readonly admitting = new Map<number, Promise<void>>();

  /** A gained bucket: admitted once its earlier reconciles ended (see admit). */
  private promote(index: number): void {
    this.metrics.gained();
    const term = this.bump(index);
    const admission = this.admit(index, term).finally(() => {
      if (this.admitting.get(index) === admission) this.admitting.delete(index);
    });
    this.admitting.set(index, admission);
  }

  /**
   * Waits for this replica's reconciles of the bucket's keys still running from an earlier term
   * (a bucket lost to a missed renewal and regained): replaying before they end would reconcile a
   * key again from a cache that lacks their writes. Then the filtered caches list the bucket's
   * keys (onAdd) and the other caches replay, only that bucket's keys getting in.
   */
  private async admit(index: number, term: number): Promise<void> {
    await this.drain(index);
    if (this.terms.get(index) !== term) return; // lost again meanwhile
    this.admitted.add(index);
    await Promise.all(this.filtered().map((c) => c.refill()));
    if (this.terms.get(index) !== term) return;
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

  /**
   * A lost bucket: its keys leave every queue and the filtered caches; reconciles in flight
   * finish (their writes are locked).
   */
  private demote(index: number): void {
    this.metrics.lost();
    this.bump(index);
    this.admitted.delete(index);
    const inBucket = (key: string) => this.buckets?.bucketOf(key) === index;
    const dropped = this.controllers().reduce((n, c) => n + c.drop(inBucket), 0);
    const evicted = this.filtered().reduce((n, c) => n + c.evict(inBucket), 0);
    if (this.shardLabel) for (const c of this.filtered()) c.rewatch();
    this.log.info({ bucket: this.buckets?.names[index], dropped, evicted }, "bucket lost, its keys dropped");
  }

  private bump(index: number): number {
    const term = (this.terms.get(index) ?? 0) + 1;
    this.terms.set(index, term);
    return term;
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
