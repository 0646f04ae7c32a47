// Remembering resolutions: the per-replica result cache (rebuilt when its
// size or TTL is reconfigured) and the single-flight that lets identical
// in-flight requests share one call. The reconciler asks; metrics, spans,
// deadlines and status writes stay its business.
import { ResultCache, SingleFlight } from "./cache.ts";
import type { RuntimeConfig } from "./config.ts";
import type { CacheInfo } from "./plan.ts";
import type { Resolved } from "./resolver.ts";

/** The part of a resolve plan the memo needs. */
export interface MemoPlan {
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

/** The cache's byte budget (entries and TTL are configurable, this is not). */
const CACHE_MAX_BYTES = 256 * 1024 * 1024;

type CacheShape = Pick<RuntimeConfig, "cacheSize" | "cacheTtlMs">;

export class ResolutionMemo {
  private readonly flights = new SingleFlight<Resolved>();
  private readonly now: (() => number) | undefined;
  private cache: ResultCache | undefined;
  private shape = "";

  /** `now` stamps stored results (tests fix it). */
  constructor(opts: { now?: () => number } = {}) {
    this.now = opts.now;
  }

  /** The cached result for `plan`; undefined on a miss or when the plan bypasses the cache. */
  lookup(plan: MemoPlan, config: CacheShape): Memoized | undefined {
    if (!plan.useCache) return undefined;
    const hit = this.cacheFor(config).get(plan.cacheKey);
    return (
      hit && {
        resolved: hit.resolved,
        cached: { operation: "retrieve", storedAt: hit.storedAt },
        shared: false,
      }
    );
  }

  /**
   * Joins the in-flight call for `plan.cacheKey` or starts one with `fn`;
   * `signal` detaches this caller (the call is aborted once nobody waits).
   * A success is stored when the plan uses the cache; failures never are.
   */
  run(
    plan: MemoPlan,
    config: CacheShape,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<Resolved>,
  ): { shared: boolean; result: Promise<Memoized> } {
    const { promise, shared } = this.flights.run(plan.cacheKey, signal, fn);
    const result = promise.then((resolved): Memoized => {
      if (!plan.useCache) return { resolved, cached: undefined, shared };
      // into the current cache: one rebuilt for a newer config while this call ran must not be undone
      const entry = (this.cache ?? this.cacheFor(config)).set(plan.cacheKey, resolved);
      return { resolved, cached: { operation: "store", storedAt: entry.storedAt }, shared };
    });
    return { shared, result };
  }

  /** Calls in flight (for tests and metrics). */
  get inFlight(): number {
    return this.flights.inFlight;
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
