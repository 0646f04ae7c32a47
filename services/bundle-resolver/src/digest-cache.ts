// Content-addressed results (verified manifests, extracted layer objects)
// with single-flight: concurrent requests for one digest make one registry
// fetch. The key carries the namespace and a hash of the credential used, so
// content fetched with one tenant's credentials never serves a request that
// could not have fetched it itself.
import { createHash } from "node:crypto";
import type { BasicCredential } from "@quarry/oci";
import { SingleFlight } from "@quarry/resolver-sdk/internal";
import { LRUCache } from "lru-cache";

export interface Sized {
  readonly byteLength: number;
}

export class DigestCache<T extends Sized> {
  private lru: LRUCache<string, T>;
  private readonly flights = new SingleFlight<T>();
  private budget: number;
  hits = 0;
  misses = 0;

  constructor(maxBytes: number) {
    this.budget = maxBytes;
    this.lru = this.build(maxBytes);
  }

  /** Applies a new budget (live config); the cache starts empty when it changes. */
  resize(maxBytes: number): void {
    if (maxBytes === this.budget) return;
    this.budget = maxBytes;
    this.lru = this.build(maxBytes);
  }

  get size(): number {
    return this.lru.calculatedSize ?? 0;
  }

  /** Cached value, else one shared call of `fetch` per key. */
  async get(key: string, signal: AbortSignal, fetch: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const hit = this.lru.get(key);
    if (hit !== undefined) {
      this.hits++;
      return hit;
    }
    this.misses++;
    const { promise } = this.flights.run(key, signal, async (s) => {
      const value = await fetch(s);
      this.lru.set(key, value);
      return value;
    });
    return promise;
  }

  private build(maxBytes: number): LRUCache<string, T> {
    return new LRUCache<string, T>({ maxSize: maxBytes, sizeCalculation: (v) => Math.max(1, v.byteLength) });
  }
}

export function digestKey(
  namespace: string,
  repository: string,
  credential: BasicCredential | undefined,
  digest: string,
): string {
  const who = credential
    ? createHash("sha256").update(`${credential.username}\0${credential.password}`).digest("hex").slice(0, 32)
    : "anonymous";
  return `${namespace}|${repository}|${who}|${digest}`;
}
