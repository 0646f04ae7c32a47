// Result cache and single-flight. The cache key includes the request's
// namespace: two tenants asking for the same params may hold different
// credentials, so one's result must never serve the other (Tekton's key
// omits the namespace; Quarry's does not).
import { LRUCache } from "lru-cache";
import type { CacheMode } from "./params.ts";
import type { Params, Resolved } from "./resolver.ts";

export function cacheKey(type: string, namespace: string, params: Params, url: string | undefined): string {
  const sorted = Object.keys(params)
    .sort()
    .map((k) => [k, params[k]]);
  return JSON.stringify([type, namespace, sorted, url ?? null]);
}

/** always: read and write; never: neither; auto: only for immutable references. */
export function useCache(mode: CacheMode, immutable: boolean): boolean {
  return mode === "always" || (mode === "auto" && immutable);
}

export interface CachedResult {
  resolved: Resolved;
  storedAt: string;
}

export class ResultCache {
  private readonly lru: LRUCache<string, CachedResult>;
  private readonly now: () => number;

  constructor({
    maxEntries,
    maxBytes,
    ttlMs,
    now = Date.now,
  }: {
    maxEntries: number;
    maxBytes: number;
    ttlMs: number;
    /** Clock for storedAt (expiry is the LRU's own). */
    now?: () => number;
  }) {
    this.now = now;
    this.lru = new LRUCache<string, CachedResult>({
      max: maxEntries,
      maxSize: maxBytes,
      sizeCalculation: (v) => Math.max(1, v.resolved.data.byteLength),
      ttl: ttlMs,
    });
  }

  get(key: string): CachedResult | undefined {
    return this.lru.get(key);
  }

  set(key: string, resolved: Resolved): CachedResult {
    const entry = { resolved, storedAt: new Date(this.now()).toISOString() };
    this.lru.set(key, entry);
    return entry;
  }

  get size(): number {
    return this.lru.size;
  }
}

/**
 * Identical in-flight resolutions share one call. The shared call is aborted
 * only when every request waiting on it has gone (deleted, done elsewhere).
 */
export class SingleFlight<T> {
  private readonly flights = new Map<
    string,
    { promise: Promise<T>; abort: AbortController; waiters: number }
  >();

  get inFlight(): number {
    return this.flights.size;
  }

  /** Joins or starts the flight for `key`; `signal` detaches this waiter. Returns whether it joined. */
  run(
    key: string,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<T>,
  ): { promise: Promise<T>; shared: boolean } {
    if (signal.aborted)
      return { promise: Promise.reject(signal.reason ?? new Error("aborted")), shared: false };
    let flight = this.flights.get(key);
    const shared = flight !== undefined;
    if (!flight) {
      const abort = new AbortController();
      const created = { promise: Promise.resolve() as Promise<T>, abort, waiters: 0 };
      created.promise = fn(abort.signal).finally(() => {
        if (this.flights.get(key) === created) this.flights.delete(key);
      });
      this.flights.set(key, created);
      flight = created;
    }
    const f = flight;
    f.waiters++;
    const detach = () => {
      f.waiters--;
      if (f.waiters === 0) f.abort.abort(signal.reason);
    };
    signal.addEventListener("abort", detach, { once: true });
    const promise = new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason ?? new Error("aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      f.promise.then(resolve, reject).finally(() => {
        signal.removeEventListener("abort", onAbort);
        signal.removeEventListener("abort", detach);
      });
    });
    return { promise, shared };
  }
}
