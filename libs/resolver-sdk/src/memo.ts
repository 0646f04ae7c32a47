// Remembering resolutions: the per-replica result cache (rebuilt when its
// size or TTL is reconfigured) and the single-flight that lets identical
// in-flight requests share one call. The reconciler asks; metrics, spans,
// deadlines and status writes stay its business. A Pending is never stored
// nor handed to another request: it speaks for the request whose step ran.
import { ResultCache, SingleFlight } from "./cache.ts";
import type { RuntimeConfig } from "./config.ts";
import type { CacheInfo } from "./decide.ts";
import { isPending, type Pending, type Resolved } from "./resolver.ts";

/** The part of a resolve decision the memo needs. */
export interface MemoKey {
  cacheKey: string;
  useCache: boolean;
}

export interface Memoized {
  resolved: Resolved;
  /** How the result cache took part: served the result, stored it, or neither (bypassed). */
  cached: Omit<CacheInfo, "type"> | undefined;
  /** The result came from a call another request had in flight. */
  shared: boolean;
}

/** A step that left the resolution pending (this request's own step, never another's). */
export interface MemoPending {
  pending: Pending;
  shared: false;
}

/** The cache's byte budget (entries and TTL are configurable, this is not). */
const CACHE_MAX_BYTES = 256 * 1024 * 1024;

type CacheShape = Pick<RuntimeConfig, "cacheSize" | "cacheTtlMs">;

export class ResolutionMemo {
  private readonly flights = new SingleFlight<Resolved | Pending>();
  private readonly now: (() => number) | undefined;
  private cache: ResultCache | undefined;
  private shape = "";

  /** `now` stamps stored results (tests fix it). */
  constructor(opts: { now?: () => number } = {}) {
    this.now = opts.now;
  }

  /** The cached result for `decision`; undefined on a miss or when the decision bypasses the cache. */
  lookup(decision: MemoKey, config: CacheShape): Memoized | undefined {
    if (!decision.useCache) return undefined;
    const hit = this.cacheFor(config).get(decision.cacheKey);
    return (
      hit && {
        resolved: hit.resolved,
        cached: { operation: "retrieve", storedAt: hit.storedAt },
        shared: false,
      }
    );
  }

  /**
   * Joins the in-flight call for `decision.cacheKey` or starts one with `fn`;
   * `signal` detaches this caller (the call is aborted once nobody waits).
   * A success is stored when the decision uses the cache; failures and Pendings never are.
   * A caller that joined a call which ended Pending runs `fn` itself, outside the flight: the
   * other request's step spoke for that request only (slow resolvers own per-request children).
   * So a caller whose `fn` never returns Pending never gets one.
   */
  run(
    decision: MemoKey,
    config: CacheShape,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<Resolved>,
  ): { shared: boolean; result: Promise<Memoized> };
  run(
    decision: MemoKey,
    config: CacheShape,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<Resolved | Pending>,
  ): { shared: boolean; result: Promise<Memoized | MemoPending> };
  run(
    decision: MemoKey,
    config: CacheShape,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<Resolved | Pending>,
  ): { shared: boolean; result: Promise<Memoized | MemoPending> } {
    const { promise, shared } = this.flights.run(decision.cacheKey, signal, fn);
    const result = promise.then(async (outcome): Promise<Memoized | MemoPending> => {
      if (!isPending(outcome)) return this.store(decision, config, outcome, shared);
      if (!shared) return { pending: outcome, shared: false };
      signal.throwIfAborted();
      const own = await fn(signal);
      return isPending(own) ? { pending: own, shared: false } : this.store(decision, config, own, false);
    });
    return { shared, result };
  }

  /** Calls in flight (for tests and metrics). */
  get inFlight(): number {
    return this.flights.inFlight;
  }

  private store(decision: MemoKey, config: CacheShape, resolved: Resolved, shared: boolean): Memoized {
    if (!decision.useCache) return { resolved, cached: undefined, shared };
    // into the current cache: one rebuilt for a newer config while this call ran must not be undone
    const entry = (this.cache ?? this.cacheFor(config)).set(decision.cacheKey, resolved);
    return { resolved, cached: { operation: "store", storedAt: entry.storedAt }, shared };
  }

  private cacheFor(config: CacheShape): ResultCache {
    const shape = `${config.cacheSize}/${config.cacheTtlMs}`;
    if (!this.cache || shape !== this.shape) {
      this.cache = new ResultCache({
        maxEntries: config.cacheSize,
        maxBytes: CACHE_MAX_BYTES,
        ttlMs: config.cacheTtlMs,
        now: this.now,
      });
      this.shape = shape;
    }
    return this.cache;
  }
}
