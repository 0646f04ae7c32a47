// Who is competing for a service's buckets. Each replica keeps a Lease of its
// own (`<service>.member.<hash>`, holderIdentity = its identity), renewed
// every retry period, and lists its peers' ones: a replica that holds no
// bucket yet is otherwise invisible, and the bucket set needs the number of
// live replicas to hand buckets over to a newcomer (scaling up spreads work).
//
// A peer's Lease is live while it keeps changing; one unchanged for its lease
// duration (the local clock, as for buckets) belongs to a replica that died
// and is deleted, under its resourceVersion, so crashed pods leave nothing behind.
import type { Logger } from "@quarry/observability";
import { errorMessage, isApiError } from "../client/errors.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { LeaseTiming } from "./elector.ts";
import { type Lease, type LeaseClient, type LeaseSpec, microTime } from "./lease.ts";
import { type LeaseCache, LeaseView } from "./lease-cache.ts";

export interface MembershipOptions {
  leases: LeaseClient;
  /** The service's Leases as a watch sees them: listed instead of a LIST per round once synced. */
  cache?: LeaseCache;
  /** This replica's member Lease. */
  name: string;
  identity: string;
  /** Labels of every member Lease of the service (the list selects on all of them). */
  labels: Record<string, string>;
  timing: LeaseTiming;
  log: Logger;
  clock?: Clock;
  /** Called after every round, successful or not (the bucket set rebalances). */
  onRound?: () => void;
}

interface Seen {
  resourceVersion: string;
  at: number;
}

export class Membership {
  private readonly opts: MembershipOptions;
  private readonly clock: Clock;
  private readonly seen = new Map<string, Seen>();
  private readonly view: LeaseView;
  private live: string[];
  private own: Lease | undefined;
  private contactAt: number | undefined;
  private cancelTick: (() => void) | undefined;
  private round: Promise<void> = Promise.resolve();
  private stopped = false;
  private failing = false;

  constructor(opts: MembershipOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.live = [opts.identity];
    this.view = new LeaseView(opts.cache, opts.name);
  }

  /** Identities of the live replicas, this one included, sorted. */
  members(): readonly string[] {
    return this.live;
  }

  /** Local clock of the last round that renewed this replica's Lease; undefined before the first. */
  lastContact(): number | undefined {
    return this.contactAt;
  }

  /** Runs the first round now and resolves when it is over; later rounds follow every retry period. */
  start(): Promise<void> {
    this.round = this.tick();
    return this.round;
  }

  /** Stops the rounds and deletes this replica's Lease, so peers stop counting it at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTick?.();
    await this.round;
    const own = this.own;
    if (!own) return;
    await this.opts.leases.delete(own).catch((err: unknown) => {
      if (!isApiError(err, 404) && !isApiError(err, 409))
        this.opts.log.warn({ err: errorMessage(err) }, "could not delete the member lease");
    });
  }

  private async tick(): Promise<void> {
    try {
      await this.renewAndList();
      if (this.failing) this.opts.log.info("member leases reachable again");
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.opts.log.warn({ err: errorMessage(err) }, "member lease round failed");
      this.failing = true;
    }
    if (this.stopped) return;
    this.opts.onRound?.();
    this.cancelTick = this.clock.setTimer(this.opts.timing.retryPeriodMs, () => {
      this.round = this.tick();
    });
  }

  private async renewAndList(): Promise<void> {
    const { leases, labels, name, identity } = this.opts;
    const known = this.view.read();
    const all = await this.memberLeases(known === "uncached");
    const now = this.clock.now();
    let mine: Lease | undefined;
    if (known === "uncached") {
      mine = all.find((l) => l.metadata.name === name);
      this.view.saw(mine);
    } else mine = known.lease;
    const spec: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.opts.timing.leaseDurationMs / 1000),
      acquireTime: mine?.spec?.acquireTime ?? microTime(now),
      renewTime: microTime(now),
    };
    if (this.stopped) return;
    try {
      this.own = mine ? await leases.update(mine, spec) : await leases.create(name, spec, labels);
    } catch (err) {
      this.view.forget();
      throw err;
    }
    this.view.saw(this.own);
    this.contactAt = now;
    const live = new Set([identity]);
    const present = new Set<string>();
    for (const lease of all) {
      const leaseName = lease.metadata.name ?? "";
      if (leaseName === name) continue;
      present.add(leaseName);
      if (this.isLive(lease, now)) {
        if (lease.spec?.holderIdentity) live.add(lease.spec.holderIdentity);
      } else {
        await this.collect(lease);
      }
    }
    for (const gone of [...this.seen.keys()]) if (!present.has(gone)) this.seen.delete(gone);
    this.live = [...live].sort();
  }

  /** Every member Lease of the service: from the watch's cache, else (or after a conflict) one LIST. */
  private memberLeases(fromApiserver: boolean): Promise<Lease[]> {
    const { cache, labels, leases } = this.opts;
    const matches = (l: Lease) => Object.entries(labels).every(([k, v]) => l.metadata.labels?.[k] === v);
    if (cache && !fromApiserver) return Promise.resolve(cache.list().filter(matches));
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    return leases.list(selector);
  }

  private isLive(lease: Lease, now: number): boolean {
    const name = lease.metadata.name ?? "";
    const rv = lease.metadata.resourceVersion ?? "";
    let seen = this.seen.get(name);
    if (seen?.resourceVersion !== rv) {
      seen = { resourceVersion: rv, at: now };
      this.seen.set(name, seen);
    }
    const seconds = lease.spec?.leaseDurationSeconds ?? this.opts.timing.leaseDurationMs / 1000;
    return Boolean(lease.spec?.holderIdentity) && now - seen.at < seconds * 1000;
  }

  /** A dead replica's Lease: deleted unless it changed meanwhile (409) or a peer was first (404). */
  private async collect(lease: Lease): Promise<void> {
    try {
      await this.opts.leases.delete(lease);
      this.seen.delete(lease.metadata.name ?? "");
      this.opts.log.info(
        { lease: lease.metadata.name, holder: lease.spec?.holderIdentity },
        "removed a dead replica's member lease",
      );
    } catch (err) {
      if (!isApiError(err, 404) && !isApiError(err, 409)) throw err;
    }
  }
}
