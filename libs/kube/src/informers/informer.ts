// List+watch cache of one resource type. The supervisor loop never gives up:
// any watch error restarts the watch with capped, jittered backoff from the
// last seen resourceVersion; "410 Gone" (or an ERROR event carrying 410)
// relists and diffs the cache so no add, change or delete is missed; a
// watchdog restarts a watch that went silent (no event or bookmark); a
// periodic resync hands every cached object to the slow lane.
import type { Logger } from "@quarry/observability";
import type { KubeClient, KubeObject, WatchEvent } from "../client/client.ts";
import { ApiError, WatchExpiredError, watchEventError } from "../client/errors.ts";
import type { ResourceType } from "../client/resources.ts";
import { RetryDelay } from "../time/backoff.ts";
import { Indexer, type IndexFunc } from "./indexer.ts";
import { peekWatchEvent } from "./peek-event.ts";

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, obj: T): void;
  onDelete?(obj: T): void;
  /** Periodic resync of every cached object; route it to a slow lane. */
  onResync?(obj: T): void;
}

/** Which keys a cache holds (HA by buckets). */
export interface KeyFilter {
  admits(key: string): boolean;
  /** True while every key is admitted: no event is worth scanning before it is parsed. */
  admitsAll(): boolean;
  /**
   * A label selector narrowing lists and watches to (a superset of) the admitted keys, so the
   * apiserver does not send the others; joined to the informer's own. Read at every list and
   * watch: after it narrows, rewatch().
   */
  labelSelector?(): string | undefined;
}

export interface InformerOptions<T = KubeObject> {
  log: Logger;
  /** One namespace, several separated by commas (one list/watch each, one cache), or all when undefined. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Period of the slow-lane resync; 0 disables it. */
  resyncMs?: number;
  /** A watch with no event (bookmarks and events of keys not admitted count) for this long is restarted. */
  watchdogMs?: number;
  /** Server-side watch timeout, randomised up to 2x so replicas don't reconnect in step. */
  watchTimeoutSeconds?: number;
  pageSize?: number;
  /**
   * Applied to every object before it is cached or handed to a handler (client-go's
   * SetTransform): drop what the controller never reads, so a cache of thousands of objects
   * does not hold it. Must not mutate shared state; it may mutate and return the object.
   */
  transform?: (obj: T) => T;
  /**
   * A list or watch error this returns true for stops the informer (isRunning() turns false)
   * instead of being retried: e.g. a 403 where read access is granted per namespace, so its
   * owner can drop the informer and make a new one once access is granted.
   */
  stopOn?: (err: unknown) => boolean;
  /**
   * The keys this cache holds (HA by buckets: those of the buckets this replica leads). Events of
   * other keys are skipped before they are parsed, never cached, never handed to a handler; a
   * key that stops being admitted leaves with evict(), one that starts with refill(). Undefined:
   * every key.
   */
  admit?: KeyFilter;
}

export function objectKey(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf("/");
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

class StalledError extends Error {}

/** One list/watch stream: a namespace (or all) with its own resourceVersion and backoff. */
interface Stream {
  namespace: string | undefined;
  resourceVersion: string;
  retry: RetryDelay;
  listed: boolean;
  /** Relists asked for (refill) and the last one done: the watch restarts while they differ. */
  wanted: number;
  done: number;
  /** A new watch (no relist) asked for by rewatch(). */
  rewatch: boolean;
  watch: AbortController | undefined;
  /** The wait before retrying a failed list or watch; a refill cuts it short. */
  backoff: AbortController | undefined;
}

export class Informer<T extends KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly indexer = new Indexer<T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly stopController = new AbortController();
  private streams: Stream[] = [];
  private loop: Promise<void> | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private lastError: string | undefined;
  private refills: { wanted: Map<Stream, number>; resolve: () => void }[] = [];
  private skipped = 0;

  private readonly client: KubeClient;
  private readonly rt: ResourceType;
  private readonly opts: InformerOptions<T>;

  constructor(client: KubeClient, rt: ResourceType, opts: InformerOptions<T>) {
    this.client = client;
    this.rt = rt;
    this.opts = opts;
  }

  /** The resource's plural name (metrics, logs). */
  get resource(): string {
    return this.rt.plural;
  }

  on(handlers: InformerHandlers<T>): this {
    this.handlers.push(handlers);
    return this;
  }

  start(): void {
    if (this.loop) return;
    const namespaces = this.opts.namespace
      ? this.opts.namespace
          .split(",")
          .map((n) => n.trim())
          .filter(Boolean)
      : [undefined];
    this.streams = namespaces.map((namespace) => ({
      namespace,
      resourceVersion: "",
      retry: new RetryDelay({ baseMs: 200, maxMs: 30_000 }),
      listed: false,
      wanted: 0,
      done: 0,
      rewatch: false,
      watch: undefined,
      backoff: undefined,
    }));
    this.loop = Promise.all(this.streams.map((st) => this.run(st))).then(() => undefined);
    const resyncMs = this.opts.resyncMs ?? 10 * 60_000;
    if (resyncMs > 0) {
      this.resyncTimer = setInterval(() => this.replay(), resyncMs);
    }
  }

  /**
   * Hands every cached object to the handlers' onResync now, as a periodic resync does (a
   * replica that gained a bucket uses it to enqueue the keys it now owns).
   */
  replay(): void {
    for (const obj of this.cache.values()) for (const h of this.handlers) h.onResync?.(obj);
  }

  /**
   * Lists again (then watches from the new list) so keys admit() now lets in are cached and
   * handed to onAdd; resolves once every stream has relisted, or the informer stopped. Keys gone
   * from the list are handed to onDelete only if still admitted (else they left, not died).
   */
  refill(): Promise<void> {
    if (this.streams.length === 0 || this.stopController.signal.aborted) return Promise.resolve();
    const wanted = new Map<Stream, number>();
    for (const st of this.streams) {
      st.wanted++;
      wanted.set(st, st.wanted);
      // a bucket just gained lists its keys now, not after a failed watch's backoff (up to 30 s)
      st.watch?.abort();
      st.backoff?.abort();
    }
    return new Promise((resolve) => this.refills.push({ wanted, resolve }));
  }

  /**
   * Restarts the watches from where they are, without a relist, so a label selector that
   * narrowed (admit's) takes effect: keys that left are evicted, nothing new comes in.
   */
  rewatch(): void {
    for (const st of this.streams) {
      st.rewatch = true;
      st.watch?.abort();
    }
  }

  /** Drops the cached objects whose key matches, handing them to no handler (they left this cache's scope). */
  evict(match: (key: string) => boolean): number {
    let n = 0;
    for (const key of [...this.cache.keys()]) {
      if (!match(key)) continue;
      this.remove(key);
      n++;
    }
    return n;
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    await this.loop;
    for (const r of this.refills.splice(0)) r.resolve();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Running means the supervisor loop is alive; a failing watch is still running (it retries). */
  isRunning(): boolean {
    return this.loop !== undefined && !this.stopController.signal.aborted;
  }

  /** `skipped`: watch events of keys not admitted, dropped unparsed. */
  status(): { synced: boolean; objects: number; skipped: number; lastError?: string } {
    return {
      synced: this.synced,
      objects: this.cache.size,
      skipped: this.skipped,
      lastError: this.lastError,
    };
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  getByKey(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  /**
   * Adds a secondary index, kept in step with the cache on every add, update, delete and relist.
   * May be called before or after start(); objects already cached are indexed at once. Adding
   * the same function under the same name again is a no-op (readers of a shared informer).
   */
  addIndex(name: string, fn: IndexFunc<T>): this {
    this.indexer.add(name, fn, this.cache);
    return this;
  }

  /** Cached objects whose index `name` holds `value`; throws if no such index was added. */
  byIndex(name: string, value: string): T[] {
    const out: T[] = [];
    for (const key of this.indexer.keys(name, value)) {
      const obj = this.cache.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  // Every cache write goes through these two, so the indexes cannot drift from the cache.
  private store(key: string, obj: T): void {
    this.cache.set(key, obj);
    this.indexer.set(key, obj);
  }

  private remove(key: string): void {
    this.cache.delete(key);
    this.indexer.delete(key);
  }

  private get log(): Logger {
    return this.opts.log;
  }

  private async run(stream: Stream): Promise<void> {
    const signal = this.stopController.signal;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList || stream.done < stream.wanted) {
          const asked = stream.wanted;
          await this.relist(stream);
          needList = false;
          stream.done = asked;
          this.settleRefills();
        }
        await this.watchOnce(stream);
        stream.retry.reset();
      } catch (err) {
        if (signal.aborted) break;
        // a refill aborted the watch: relist now, no backoff; a rewatch: watch again now
        if (stream.done < stream.wanted) continue;
        if (stream.rewatch) {
          stream.rewatch = false;
          continue;
        }
        if (err instanceof WatchExpiredError) {
          this.log.info({ resource: this.rt.plural }, "watch expired (410), relisting");
          needList = true;
          continue;
        }
        this.lastError = err instanceof Error ? err.message : String(err);
        if (this.opts.stopOn?.(err)) {
          this.log.info(
            { resource: this.rt.plural, err: this.lastError },
            "list/watch refused, informer stopped",
          );
          this.stopController.abort();
          if (this.resyncTimer) clearInterval(this.resyncTimer);
          break;
        }
        const delay = stream.retry.next();
        if (err instanceof StalledError) {
          this.log.warn({ resource: this.rt.plural }, "watch stalled, restarting");
        } else {
          this.log.warn(
            { resource: this.rt.plural, err: this.lastError, retryInMs: delay },
            "list/watch failed",
          );
        }
        const backoff = new AbortController();
        stream.backoff = backoff;
        await sleep(delay, AbortSignal.any([signal, backoff.signal]));
        stream.backoff = undefined;
      }
    }
  }

  private async relist(stream: Stream): Promise<void> {
    const fresh = new Map<string, T>();
    let cont: string | undefined;
    let rv = "";
    do {
      const page = await this.client.list<T>(
        this.rt,
        stream.namespace,
        {
          labelSelector: this.labelSelector(),
          fieldSelector: this.opts.fieldSelector,
          limit: this.opts.pageSize ?? 500,
          continue: cont,
        },
        this.stopController.signal,
      );
      for (const listed of page.items) {
        const key = objectKey(listed);
        if (!this.admits(key)) continue;
        // list items omit apiVersion/kind; restore them so consumers see whole objects
        listed.apiVersion ??= this.rt.group ? `${this.rt.group}/${this.rt.version}` : this.rt.version;
        listed.kind ??= this.rt.kind;
        fresh.set(key, this.transformed(listed));
      }
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion ?? "";
    } while (cont);
    // diff against this stream's part of the cache: deletions missed while disconnected surface here
    for (const [key, old] of this.cache) {
      if (stream.namespace !== undefined && old.metadata.namespace !== stream.namespace) continue;
      if (!fresh.has(key)) {
        this.remove(key);
        if (this.admits(key)) for (const h of this.handlers) h.onDelete?.(old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = this.cache.get(key);
      this.store(key, obj);
      if (!old) for (const h of this.handlers) h.onAdd?.(obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
        for (const h of this.handlers) h.onUpdate?.(old, obj);
    }
    stream.resourceVersion = rv;
    stream.listed = true;
    this.lastError = undefined;
    if (!this.synced && this.streams.every((st) => st.listed)) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private async watchOnce(stream: Stream): Promise<void> {
    // the watchdog aborts this one watch; stop() aborts everything. AbortSignal.any
    // also covers a stop() that happened before this watch began.
    const watchAbort = new AbortController();
    stream.watch = watchAbort;
    stream.rewatch = false;
    const signal = AbortSignal.any([this.stopController.signal, watchAbort.signal]);
    const watchdogMs = this.opts.watchdogMs ?? 5 * 60_000;
    let stalled = false;
    let watchdog: NodeJS.Timeout | undefined;
    // an event only notes the time; the one timer, when due, re-arms itself for what is left of
    // the quiet period (a timer cancelled and set again per event cost every event a timer-list
    // insertion)
    let lastEventAt = performance.now();
    const armWatchdog = (ms: number) => {
      watchdog = setTimeout(() => {
        const quietMs = performance.now() - lastEventAt;
        if (quietMs < watchdogMs) return armWatchdog(watchdogMs - quietMs);
        stalled = true;
        watchAbort.abort();
      }, ms);
    };
    const base = this.opts.watchTimeoutSeconds ?? 300;
    try {
      armWatchdog(watchdogMs);
      const events = this.client.watch<T>(
        this.rt,
        stream.namespace,
        {
          resourceVersion: stream.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: Math.floor(base * (1 + Math.random())),
          labelSelector: this.labelSelector(),
          fieldSelector: this.opts.fieldSelector,
        },
        signal,
        // an event of a key not admitted shows the watch is alive as well as any other
        this.opts.admit &&
          ((line) => {
            lastEventAt = performance.now();
            return this.skipLine(stream, line);
          }),
      );
      for await (const event of events) {
        lastEventAt = performance.now();
        this.apply(stream, event);
      }
    } catch (err) {
      if (stalled) throw new StalledError("watch stalled");
      if (err instanceof ApiError && err.isGone) throw new WatchExpiredError(err.message);
      throw err;
    } finally {
      clearTimeout(watchdog);
    }
  }

  private apply(stream: Stream, event: WatchEvent<T>): void {
    if (event.type === "ERROR") throw watchEventError(event.object);
    const rv = event.object.metadata?.resourceVersion;
    if (rv) stream.resourceVersion = rv;
    if (event.type === "BOOKMARK") return;
    // a transform keeps the object's name and namespace: one key before and after it
    const key = objectKey(event.object);
    if (!this.admits(key)) {
      // a client without raw lines (the fake) hands every event over: skipped here instead
      this.dropUnadmitted(key);
      return;
    }
    const obj = this.transformed(event.object);
    const old = this.cache.get(key);
    if (event.type === "DELETED") {
      this.remove(key);
      for (const h of this.handlers) h.onDelete?.(old ?? obj);
      return;
    }
    this.store(key, obj);
    if (old) for (const h of this.handlers) h.onUpdate?.(old, obj);
    else for (const h of this.handlers) h.onAdd?.(obj);
  }

  private labelSelector(): string | undefined {
    const narrowed = this.opts.admit?.labelSelector?.();
    if (!narrowed) return this.opts.labelSelector;
    return this.opts.labelSelector ? `${this.opts.labelSelector},${narrowed}` : narrowed;
  }

  private admits(key: string): boolean {
    return this.opts.admit ? this.opts.admit.admits(key) : true;
  }

  /** A raw event line of a key not admitted: its resourceVersion kept, the rest never parsed. */
  private skipLine(stream: Stream, line: string): boolean {
    if (this.opts.admit?.admitsAll()) return false;
    const peeked = peekWatchEvent(line);
    if (!peeked || this.admits(peeked.key)) return false;
    if (peeked.resourceVersion) stream.resourceVersion = peeked.resourceVersion;
    this.dropUnadmitted(peeked.key);
    return true;
  }

  private dropUnadmitted(key: string): void {
    this.skipped++;
    // left over from before its bucket was lost (evict normally took it already)
    if (this.cache.has(key)) this.remove(key);
  }

  private settleRefills(): void {
    this.refills = this.refills.filter((r) => {
      for (const [st, n] of r.wanted) if (st.done < n) return true;
      r.resolve();
      return false;
    });
  }

  private transformed(obj: T): T {
    return this.opts.transform ? this.opts.transform(obj) : obj;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
