// Leader election on one coordination.k8s.io Lease, as client-go's
// leaderelection does it: take the Lease when it is missing, free or expired,
// renew it every retry period, give up leading when no renewal succeeded for
// the renew deadline, and on a graceful exit clear holderIdentity so another
// replica takes over at once instead of waiting out the lease duration.
//
// Expiry is judged by the local clock from the moment this replica last saw
// the Lease change (never by comparing the holder's renewTime with our clock),
// so clock skew between nodes cannot make two replicas lead at once.
import type { Logger } from "@quarry/observability";
import { errorMessage, isApiError } from "../client/errors.ts";
import { type Clock, realClock } from "../time/clock.ts";
import { type Lease, type LeaseClient, type LeaseSpec, microTime } from "./lease.ts";
import { type LeaseCache, LeaseView } from "./lease-cache.ts";

export interface LeaseTiming {
  /** How long a follower waits, after it last saw the Lease change, before taking it over. */
  leaseDurationMs: number;
  /** How long the leader keeps leading without a successful renewal. Shorter than the lease duration. */
  renewDeadlineMs: number;
  /** Time between attempts to acquire or renew. */
  retryPeriodMs: number;
}

/** client-go's defaults (kube-controller-manager, knative). */
export const DEFAULT_LEASE_TIMING: LeaseTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** Throws unless lease duration > renew deadline > retry period > 0 (client-go's own checks). */
export function checkLeaseTiming(t: LeaseTiming): void {
  if (!(t.retryPeriodMs > 0)) throw new Error("leader election: the retry period must be positive");
  if (!(t.renewDeadlineMs > t.retryPeriodMs))
    throw new Error("leader election: the renew deadline must be longer than the retry period");
  if (!(t.leaseDurationMs > t.renewDeadlineMs))
    throw new Error("leader election: the lease duration must be longer than the renew deadline");
}

/**
 * following: not leading (standing by, or the Lease is someone else's);
 * acquiring: a write taking the Lease is in flight;
 * leading: holds the Lease and owns its work;
 * releasing: still holds the Lease but has given up its work (a hand-over in progress);
 * stopped: released, or stopped at shutdown.
 */
export type ElectorState = "following" | "acquiring" | "leading" | "releasing" | "stopped";

/**
 * Why a Lease may be taken: `free`, nobody holds it (missing, released, or recorded as ours);
 * `unclaimed`, it has stayed free for UNCLAIMED_AFTER_RETRIES retry periods (every replica whose
 * share allowed it had a round to take it, and none did: a share view that counts a replica
 * already gone, as in a rolling update's step, would otherwise leave it unowned until it expires);
 * `expired`, its holder went silent, or it has stayed free for a whole lease duration.
 */
export type AcquireReason = "free" | "unclaimed" | "expired";

/** Retry periods a free Lease waits for a replica below its share before anyone may take it. */
export const UNCLAIMED_AFTER_RETRIES = 3;

export interface ElectorHooks {
  /** Asked, synchronously, before taking a Lease; false leaves it (a Lease recorded as ours is then released). */
  canAcquire(reason: AcquireReason): boolean;
  /** This replica now leads: its work may start. */
  gained(): void;
  /** This replica no longer leads: its work must stop. */
  lost(): void;
  /** An acquisition canAcquire allowed did not succeed (a peer was first): the share it held is free again. */
  missed?(): void;
}

export interface LeaseElectorOptions {
  leases: LeaseClient;
  /** The service's Leases as a watch sees them: read instead of a GET per round once synced. */
  cache?: LeaseCache;
  name: string;
  identity: string;
  labels: Record<string, string>;
  timing: LeaseTiming;
  hooks: ElectorHooks;
  log: Logger;
  clock?: Clock;
  /** Jitter of a follower's retries, in [0, 1); injected by tests. */
  random?: () => number;
}

/** Followers retry up to this fraction later than the retry period, so replicas do not poll in step. */
const JITTER = 0.2;

interface Observed {
  resourceVersion: string;
  lease: Lease | undefined;
  /** Local clock when this version was first seen. */
  at: number;
}

export class LeaseElector {
  readonly name: string;
  readonly identity: string;
  private readonly opts: LeaseElectorOptions;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly view: LeaseView;
  private current: ElectorState = "following";
  private observed: Observed | undefined;
  /** Start of the last attempt whose renewal succeeded: leading ends renewDeadline after it. */
  private lastRenewAt = 0;
  /** Until when a Lease this replica handed over is left to others. */
  private notBefore = 0;
  private cancelTick: (() => void) | undefined;
  private cancelWatchdog: (() => void) | undefined;
  /** Every Lease read and write goes through this chain: one at a time, so none races another. */
  private chain: Promise<void> = Promise.resolve();
  private failing = false;
  private poked = false;
  private term: { at: number; reason: AcquireReason } | undefined;

  constructor(opts: LeaseElectorOptions) {
    checkLeaseTiming(opts.timing);
    this.opts = opts;
    this.name = opts.name;
    this.identity = opts.identity;
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.view = new LeaseView(opts.cache, opts.name);
  }

  get state(): ElectorState {
    return this.current;
  }

  /** Leading: this replica owns the Lease's work. */
  isLeader(): boolean {
    return this.current === "leading";
  }

  /** When and why the current term of leading began; undefined when not leading. */
  leadingSince(): { at: number; reason: AcquireReason } | undefined {
    return this.current === "leading" ? this.term : undefined;
  }

  /** Who holds the Lease as last seen (this replica included); undefined when free or expired. */
  holder(): string | undefined {
    if (this.current === "leading" || this.current === "releasing") return this.identity;
    const spec = this.observed?.lease?.spec;
    if (!spec?.holderIdentity || this.expired()) return undefined;
    return spec.holderIdentity;
  }

  start(): void {
    if (this.current !== "following" || this.cancelTick) return;
    this.schedule(0);
  }

  /** Tries to acquire now instead of at the next retry (a peer left, so the share grew). */
  poke(): void {
    if (this.current !== "following") return;
    if (this.cancelTick) this.schedule(0);
    else this.poked = true; // a round is running: the next one follows at once
  }

  /**
   * Gives the Lease to another replica while this one keeps running: stops owning the work
   * (lost), waits for `drain` (work in flight), then clears holderIdentity. It keeps renewing
   * meanwhile, so nobody else takes the work before the drain is over, and leaves the Lease to
   * others for one lease duration afterwards.
   */
  async handOver(drain: () => Promise<void>): Promise<void> {
    if (this.current !== "leading") return;
    this.current = "releasing";
    this.opts.hooks.lost();
    await drain().catch((err: unknown) =>
      this.opts.log.warn({ lease: this.name, err: errorMessage(err) }, "drain before hand-over failed"),
    );
    if (this.current !== "releasing") return; // the renew deadline passed, or shutdown
    await this.serial(() => this.clear()).catch((err: unknown) => this.clearFailed(err));
    if (this.current !== "releasing") return;
    this.setFollowing();
    this.notBefore = this.clock.now() + this.opts.timing.leaseDurationMs;
  }

  /** Stops for good; a held Lease is cleared so a peer takes it at once (graceful shutdown). */
  async release(): Promise<void> {
    if (this.current === "stopped") return;
    const was = this.current;
    this.stopTimers();
    this.current = "stopped";
    if (was === "leading") this.opts.hooks.lost();
    // also when following: an acquisition whose answer was lost may have made the Lease ours
    await this.serial(() => this.clear()).catch((err: unknown) => this.clearFailed(err));
  }

  /**
   * Not fatal: the Lease is no longer renewed, so peers take it once it expires; and a Lease
   * still recorded as ours but unwanted is cleared by the next round (maybeAcquire).
   */
  private clearFailed(err: unknown): void {
    this.opts.log.warn({ lease: this.name, err: errorMessage(err) }, "could not release the lease");
  }

  /** A method, not an inline test: TypeScript would keep a narrowing of `current` across awaits. */
  private isStopped(): boolean {
    return this.current === "stopped";
  }

  private schedule(ms: number): void {
    this.cancelTick?.();
    this.cancelTick = this.clock.setTimer(ms, () => {
      this.cancelTick = undefined;
      void this.serial(() => this.attempt()).then(() => this.scheduleNext());
    });
  }

  private scheduleNext(): void {
    if (this.current === "stopped" || this.cancelTick) return;
    const { retryPeriodMs } = this.opts.timing;
    const holding = this.current === "leading" || this.current === "releasing";
    const poked = this.poked;
    this.poked = false;
    if (holding) this.schedule(retryPeriodMs);
    else this.schedule(poked ? 0 : retryPeriodMs * (1 + JITTER * this.random()));
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => {});
    return next;
  }

  /** One round: read the Lease, then renew it, take it, or leave it. */
  private async attempt(): Promise<void> {
    if (this.current === "stopped") return;
    const started = this.clock.now();
    try {
      const lease = this.see(await this.read());
      if (this.isStopped()) return; // release() came in while reading; it clears the Lease itself
      if (this.current === "leading" || this.current === "releasing") await this.renew(lease, started);
      else await this.maybeAcquire(lease, started);
      this.ok();
    } catch (err) {
      this.fail(err);
    }
  }

  private async renew(lease: Lease | undefined, started: number): Promise<void> {
    const holder = lease?.spec?.holderIdentity;
    if (lease && holder !== this.identity) {
      // someone took it after our renewals stopped reaching the apiserver
      this.opts.log.warn({ lease: this.name, holder }, "lease taken by another replica");
      this.loseLead();
      return;
    }
    const spec = lease ? this.spec(lease, started, "renew") : this.spec(undefined, started, "take");
    await this.write(lease, spec);
    // the renew deadline passed while this write was out: the next round takes the Lease back
    if (this.current !== "leading" && this.current !== "releasing") return;
    this.renewed(started);
  }

  private async maybeAcquire(lease: Lease | undefined, started: number): Promise<void> {
    const holder = lease?.spec?.holderIdentity;
    const unheld = !holder || holder === this.identity;
    const ours = holder === this.identity;
    const { leaseDurationMs, retryPeriodMs } = this.opts.timing;
    const unchangedMs = this.clock.now() - (this.observed?.at ?? 0);
    const reason: AcquireReason | undefined = unheld
      ? unchangedMs >= leaseDurationMs
        ? "expired"
        : !ours && unchangedMs >= UNCLAIMED_AFTER_RETRIES * retryPeriodMs
          ? "unclaimed"
          : "free"
      : this.expired()
        ? "expired"
        : undefined;
    if (reason === undefined) return;
    // a Lease this replica handed over is left to the others (unless its holder went silent)
    if (reason !== "expired" && !ours && started < this.notBefore) return;
    if (!this.opts.hooks.canAcquire(reason)) {
      // recorded as ours (a restart under the same identity) but not wanted: let a peer have it now
      if (ours && lease) await this.write(lease, this.cleared(lease, started));
      return;
    }
    this.current = "acquiring"; // counted as held from here, so no second Lease is taken on the same share
    try {
      await this.write(lease, this.spec(lease, started, ours ? "renew" : "take"));
    } catch (err) {
      if (this.current === "acquiring") this.current = "following";
      this.opts.hooks.missed?.();
      throw err;
    }
    if (this.current !== "acquiring") return; // stopped meanwhile: release() clears it
    this.current = "leading";
    this.term = { at: this.clock.now(), reason };
    this.renewed(started);
    this.opts.log.info({ lease: this.name, reason, identity: this.identity }, "lease acquired");
    this.opts.hooks.gained();
  }

  /** The spec to write: renew keeps acquireTime and the transition count, take starts a new term. */
  private spec(lease: Lease | undefined, now: number, how: "take" | "renew"): LeaseSpec {
    const old = lease?.spec ?? {};
    const time = microTime(now);
    const transitions = old.leaseTransitions ?? 0;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.opts.timing.leaseDurationMs / 1000),
      acquireTime: how === "renew" ? (old.acquireTime ?? time) : time,
      renewTime: time,
      leaseTransitions: lease === undefined ? 0 : how === "renew" ? transitions : transitions + 1,
    };
  }

  /** Released as client-go releases: no holder, a one-second duration, the transition count kept. */
  private cleared(lease: Lease, now: number): LeaseSpec {
    const time = microTime(now);
    return {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: time,
      renewTime: time,
      leaseTransitions: lease.spec?.leaseTransitions ?? 0,
    };
  }

  /** Clears holderIdentity if the Lease is ours; one retry after a conflict (our own renewal raced it). */
  private async clear(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      const lease = this.see(await this.opts.leases.get(this.name));
      this.view.saw(lease);
      if (lease?.spec?.holderIdentity !== this.identity) return;
      try {
        await this.write(lease, this.cleared(lease, this.clock.now()));
        this.opts.log.info({ lease: this.name }, "lease released");
        return;
      } catch (err) {
        if (!isApiError(err, 409)) throw err;
      }
    }
  }

  /** The Lease from the watch's cache (or this replica's newer write), else from the apiserver. */
  private async read(): Promise<Lease | undefined> {
    const known = this.view.read();
    if (known !== "uncached") return known.lease;
    const lease = await this.opts.leases.get(this.name);
    this.view.saw(lease);
    return lease;
  }

  private async write(lease: Lease | undefined, spec: LeaseSpec): Promise<void> {
    let written: Lease;
    try {
      written = lease
        ? await this.opts.leases.update(lease, spec)
        : await this.opts.leases.create(this.name, spec, this.opts.labels);
    } catch (err) {
      // what this replica knew (and perhaps the cache) is stale: the next round reads the apiserver
      this.view.forget();
      throw err;
    }
    this.see(written);
    this.view.saw(written);
  }

  /** Records what was read or written; a new resourceVersion restarts the expiry count. */
  private see(lease: Lease | undefined): Lease | undefined {
    const rv = lease?.metadata.resourceVersion ?? "";
    if (this.observed?.resourceVersion !== rv)
      this.observed = { resourceVersion: rv, lease, at: this.clock.now() };
    return lease;
  }

  private expired(): boolean {
    const o = this.observed;
    if (!o?.lease?.spec?.holderIdentity) return true;
    const seconds = o.lease.spec.leaseDurationSeconds ?? this.opts.timing.leaseDurationMs / 1000;
    return this.clock.now() - o.at >= seconds * 1000;
  }

  private renewed(started: number): void {
    this.lastRenewAt = Math.max(this.lastRenewAt, started);
    this.cancelWatchdog?.();
    const left = this.lastRenewAt + this.opts.timing.renewDeadlineMs - this.clock.now();
    this.cancelWatchdog = this.clock.setTimer(left, () => {
      this.cancelWatchdog = undefined;
      this.opts.log.warn(
        { lease: this.name, renewDeadlineMs: this.opts.timing.renewDeadlineMs },
        "lease not renewed within the renew deadline, no longer leading",
      );
      this.loseLead();
    });
  }

  private loseLead(): void {
    const was = this.current;
    if (was !== "leading" && was !== "releasing") return;
    this.setFollowing();
    if (was === "leading") this.opts.hooks.lost();
  }

  private setFollowing(): void {
    this.current = "following";
    this.cancelWatchdog?.();
    this.cancelWatchdog = undefined;
  }

  private stopTimers(): void {
    this.cancelTick?.();
    this.cancelTick = undefined;
    this.cancelWatchdog?.();
    this.cancelWatchdog = undefined;
  }

  private ok(): void {
    if (this.failing) this.opts.log.info({ lease: this.name }, "lease reachable again");
    this.failing = false;
  }

  private fail(err: unknown): void {
    // a lost race (409) is routine; anything else is worth one warning until it recovers
    if (isApiError(err, 409)) return;
    if (!this.failing) this.opts.log.warn({ lease: this.name, err: errorMessage(err) }, "lease round failed");
    this.failing = true;
  }
}
