// HA by buckets (knative's model): a service's keys are split into N buckets
// by a hash of the key; each bucket is a Lease; every replica runs an elector
// per bucket and owns exactly the keys of the buckets it leads.
//
// Spreading: leases that are missing or were released are taken only up to a
// fair share, ceil(N / live replicas), and a replica above its share (or the
// fullest one while a peer sits below floor(N / replicas)) hands buckets over.
// Availability comes first: a bucket whose holder went silent is taken by
// whoever sees it expire, whatever its share, and balance is restored later.
import type { Logger } from "@quarry/observability";
import type { KubeClient, KubeObject } from "../client/client.ts";
import { errorMessage } from "../client/errors.ts";
import { configMaps } from "../client/resources.ts";
import { type Clock, realClock } from "../time/clock.ts";
import { bucketLeaseName, bucketOf, leaseBase, memberLeaseName } from "./bucket-hash.ts";
import { type AcquireReason, LeaseElector, type LeaseTiming } from "./elector.ts";
import { LeaseClient } from "./lease.ts";
import { WatchedLeases } from "./lease-cache.ts";
import { Membership } from "./membership.ts";

export interface BucketSetOptions {
  client: KubeClient;
  /** Where the Leases live: the service's own namespace. */
  namespace: string;
  service: string;
  identity: string;
  count: number;
  timing: LeaseTiming;
  log: Logger;
  clock?: Clock;
  random?: () => number;
  /** A bucket became this replica's: enqueue its keys. */
  onGained(index: number): void;
  /** A bucket is no longer this replica's: drop its keys. */
  onLost(index: number): void;
  /** Resolves once no work of bucket `index` is in flight; a hand-over waits for it before releasing. */
  drain(index: number): Promise<void>;
  /**
   * A ConfigMap in `namespace` that owns the Leases this replica creates (the service's own, from
   * its chart), so deleting it (helm uninstall) garbage-collects them. Missing: no owner.
   */
  ownerConfigMap?: string;
}

export interface BucketStatus {
  identity: string;
  total: number;
  /** Lease names of the buckets this replica leads. */
  held: string[];
  /** Live replicas seen through their member Leases, this one included. */
  members: number;
  /** Its member Lease was renewed within one lease duration: peers count it and it can take buckets. */
  competing: boolean;
}

export class BucketSet {
  readonly count: number;
  readonly identity: string;
  readonly names: readonly string[];
  private readonly opts: BucketSetOptions;
  private readonly clock: Clock;
  private readonly electors: LeaseElector[];
  private readonly membership: Membership;
  private readonly leases: LeaseClient;
  private readonly watched: WatchedLeases;
  private readonly holding = new Set<number>();
  private handingOver = false;
  private started = false;
  private lastMembers = 1;

  constructor(opts: BucketSetOptions) {
    if (!Number.isInteger(opts.count) || opts.count < 1)
      throw new Error(`bucket count must be ≥ 1, got ${opts.count}`);
    this.opts = opts;
    this.count = opts.count;
    this.identity = opts.identity;
    this.clock = opts.clock ?? realClock;
    const leases = new LeaseClient(opts.client, opts.namespace);
    this.leases = leases;
    const base = { "app.kubernetes.io/managed-by": "quarry", "quarry.dev/service": leaseBase(opts.service) };
    const log = opts.log.child({ component: "buckets" });
    const selector = Object.entries(base)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    this.watched = new WatchedLeases(opts.client, opts.namespace, selector, log);
    const cache = this.watched;
    this.names = Array.from({ length: opts.count }, (_, i) => bucketLeaseName(opts.service, i, opts.count));
    this.electors = this.names.map(
      (name, index) =>
        new LeaseElector({
          leases,
          cache,
          name,
          identity: opts.identity,
          labels: { ...base, "quarry.dev/lease": "bucket" },
          timing: opts.timing,
          log,
          clock: this.clock,
          random: opts.random,
          hooks: {
            canAcquire: (reason) => this.canAcquire(index, reason),
            gained: () => {
              this.holding.add(index);
              opts.onGained(index);
            },
            lost: () => {
              this.holding.delete(index);
              opts.onLost(index);
            },
            // the share it reserved went unused: a sibling that was refused may take a Lease now
            missed: () => {
              for (const e of this.electors) e.poke();
            },
          },
        }),
    );
    this.membership = new Membership({
      leases,
      cache,
      name: memberLeaseName(opts.service, opts.identity),
      identity: opts.identity,
      labels: { ...base, "quarry.dev/lease": "member" },
      timing: opts.timing,
      log,
      clock: this.clock,
      onRound: () => this.rebalance(),
    });
  }

  bucketOf(key: string): number {
    return bucketOf(key, this.count);
  }

  /** This replica leads the bucket of `key`. */
  owns(key: string): boolean {
    return this.holding.has(bucketOf(key, this.count));
  }

  holds(index: number): boolean {
    return this.holding.has(index);
  }

  /**
   * Announces this replica first, so its first acquisitions already know their peers (otherwise
   * every replica of a fleet starting together would take all free buckets), then elects.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.opts.ownerConfigMap) await this.findOwner(this.opts.ownerConfigMap);
    // one watch of the service's Leases; until it has listed, rounds read the apiserver
    this.watched.start();
    await this.watched.waitForSync(this.opts.timing.renewDeadlineMs);
    await this.membership.start();
    for (const e of this.electors) e.start();
  }

  private async findOwner(name: string): Promise<void> {
    try {
      const cm = await this.opts.client.get<KubeObject>(configMaps, this.opts.namespace, name);
      if (cm.metadata.uid)
        this.leases.owner = { apiVersion: "v1", kind: "ConfigMap", name, uid: cm.metadata.uid };
    } catch (err) {
      // Leases without an owner work the same; they only outlive an uninstall
      this.opts.log.warn({ configMap: name, err: errorMessage(err) }, "no owner for the bucket Leases");
    }
  }

  /** Releases every Lease it holds and its member Lease: peers take over at their next retry. */
  async stop(): Promise<void> {
    await Promise.all(this.electors.map((e) => e.release()));
    await this.membership.stop();
    await this.watched.stop();
  }

  status(): BucketStatus {
    const contact = this.membership.lastContact();
    return {
      identity: this.identity,
      total: this.count,
      held: [...this.holding].sort((a, b) => a - b).map((i) => this.names[i]!),
      members: this.membership.members().length,
      competing: contact !== undefined && this.clock.now() - contact < this.opts.timing.leaseDurationMs,
    };
  }

  /** Fair share: ceil and floor of N over the live replicas. */
  private shares(): { ceil: number; floor: number; members: readonly string[] } {
    const members = this.membership.members();
    const r = Math.max(1, members.length);
    return { ceil: Math.ceil(this.count / r), floor: Math.floor(this.count / r), members };
  }

  private canAcquire(_index: number, reason: AcquireReason): boolean {
    // availability first: a silent holder's bucket, or one no replica below its share took
    if (reason !== "free") return true;
    const taken = this.electors.filter((e) => e.state === "leading" || e.state === "acquiring").length;
    return taken < this.shares().ceil;
  }

  /** After each membership round: give buckets to replicas that have too few. */
  private rebalance(): void {
    const { ceil, floor, members } = this.shares();
    // a peer left (gracefully: its Leases are free now): try for them at once, not a retry later
    if (members.length < this.lastMembers) for (const e of this.electors) e.poke();
    this.lastMembers = members.length;
    if (this.handingOver) return;
    const mine = this.electors.flatMap((e, i) => (e.state === "leading" ? [i] : []));
    let excess = mine.length - ceil;
    if (excess <= 0 && mine.length > floor && this.fullestWhileOneStarves(members, floor, mine.length))
      excess = 1;
    if (excess <= 0) return;
    // After taking a bucket from a silent holder (or one nobody took), hold still for a lease
    // duration: that holder's member Lease may look live for as long, and handing buckets to its
    // share would leave them unowned until it expires (and an unclaimed one would go round again).
    const now = this.clock.now();
    const settled = this.electors.every((e) => {
      const term = e.leadingSince();
      return (
        term === undefined || term.reason === "free" || now - term.at >= this.opts.timing.leaseDurationMs
      );
    });
    if (!settled) return;
    const give = mine.slice(-excess);
    this.opts.log.info(
      { buckets: give.map((i) => this.names[i]), held: mine.length, members: members.length, share: ceil },
      "handing buckets over to balance the replicas",
    );
    this.handingOver = true;
    // handOver never rejects (a failed release is logged; the Lease then expires)
    void Promise.all(give.map((i) => this.electors[i]!.handOver(() => this.opts.drain(i)))).finally(() => {
      this.handingOver = false;
    });
  }

  /**
   * With ceil shares a replica can be left with nothing (4 buckets, 3 replicas: 2+2+0). Then the
   * fullest replica hands one over; among equals the greatest identity does, so only one moves.
   */
  private fullestWhileOneStarves(members: readonly string[], floor: number, mine: number): boolean {
    const counts = new Map(members.map((m) => [m, 0]));
    for (const e of this.electors) {
      const h = e.holder();
      if (h !== undefined && counts.has(h)) counts.set(h, counts.get(h)! + 1);
    }
    counts.set(this.identity, mine);
    const values = [...counts.values()];
    if (Math.min(...values) >= floor) return false;
    const most = Math.max(...values);
    if (mine < most) return false;
    const fullest = [...counts].filter(([, n]) => n === most).map(([m]) => m);
    return fullest.sort().at(-1) === this.identity;
  }
}
