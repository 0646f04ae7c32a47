import { transientBackoff, transientRetryAfter } from "../client/errors.ts";
import { ExponentialBackoff } from "../time/backoff.ts";
import { type Clock, realClock } from "../time/clock.ts";

export interface WorkQueueOptions {
  clock?: Clock;
  /** Used by addRateLimited/forget. Defaults to `new ExponentialBackoff()`. */
  backoff?: ExponentialBackoff;
  /**
   * Called with the new depth whenever it changes (metrics gauge). Reported once per queue
   * operation, so a key that is handed straight to a waiting worker does not produce 1 then 0.
   */
  onDepth?: (depth: number) => void;
  /** Receives client-go's workqueue measurements; see WorkQueueMetrics. */
  metrics?: WorkQueueMetrics;
}

/**
 * Plain callbacks for queue metrics, so this file needs no metrics library (ServiceRuntime binds
 * them to OpenTelemetry instruments). Semantics follow client-go's workqueue metrics.
 */
export interface WorkQueueMetrics {
  /** A key entered the queue (or was marked to re-run while processing); deduplicated adds don't count. */
  add(): void;
  /** Seconds a key waited from its first add until a worker got it. */
  queueDuration(seconds: number): void;
  /** Seconds a worker held a key (get until done). */
  workDuration(seconds: number): void;
  /** A failed key was re-added with backoff (addRateLimited). */
  retry(): void;
}

type Lane = "fast" | "slow";

interface Delayed {
  at: number;
  cancel: () => void;
}

/**
 * Keyed, deduplicating work queue with two lanes, modelled on client-go's workqueue and
 * knative's two-lane queue. Items are keys (e.g. "namespace/name"), never objects: the handler
 * reads the latest state from the cache, so collapsing N events for a key into one is safe.
 *
 * Guarantees:
 * - a key is queued at most once (across both lanes);
 * - a key is never handed to two workers at once: adds during processing are remembered and
 *   the key is re-queued by done();
 * - the slow lane (resyncs) is served only when the fast lane is empty.
 */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly backoff: ExponentialBackoff;
  private readonly onDepth: ((depth: number) => void) | undefined;
  private readonly metrics: WorkQueueMetrics | undefined;

  // Sets keep insertion order (FIFO) and allow O(1) removal for slow→fast promotion.
  private readonly fast = new Set<string>();
  private readonly slow = new Set<string>();
  // Keys being processed, with the time a worker got them (work duration, unfinished work).
  private readonly processing = new Map<string, number>();
  // When each queued or dirty key was first added, for the queue-duration metric.
  private readonly addedAt = new Map<string, number>();
  // Keys added while processing, with the lane to re-queue them in once done.
  private readonly dirty = new Map<string, Lane>();
  private readonly delayed = new Map<string, Delayed>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private readonly drainWaiters: Array<() => void> = [];
  private readonly idleWaiters: Array<{ match: (key: string) => boolean; resolve: () => void }> = [];
  private shuttingDown = false;
  private reportedDepth = 0;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.backoff = options.backoff ?? new ExponentialBackoff();
    this.onDepth = options.onDepth;
    this.metrics = options.metrics;
  }

  /** Queues `key` in the fast lane (fresh watch events, retries). Promotes it if it waits in the slow lane. */
  add(key: string): void {
    this.enqueue(key, "fast");
    this.settle();
  }

  /** Queues `key` in the slow lane (periodic resync); a no-op if it is already queued in either lane. */
  addSlow(key: string): void {
    this.enqueue(key, "slow");
    this.settle();
  }

  /**
   * Adds `key` to the fast lane (or `lane`) after `ms`. If the key already has a pending delayed
   * add, the earlier deadline wins. `ms <= 0` adds immediately. Does not affect an add that is
   * already queued. The slow lane is for housekeeping (a completed object's cleanup) that must
   * not delay fresh work.
   */
  addAfter(key: string, ms: number, lane: Lane = "fast"): void {
    if (this.shuttingDown) return;
    const addNow = lane === "slow" ? () => this.addSlow(key) : () => this.add(key);
    if (!(ms > 0)) {
      addNow();
      return;
    }
    const at = this.clock.now() + ms;
    const existing = this.delayed.get(key);
    if (existing !== undefined) {
      if (existing.at <= at) return;
      existing.cancel();
    }
    const cancel = this.clock.setTimer(ms, () => {
      this.delayed.delete(key);
      addNow();
    });
    this.delayed.set(key, { at, cancel });
  }

  /**
   * Records a failure for `key` and re-adds it after its backoff delay (or `atLeastMs`, if longer).
   * `insteadMs` replaces the backoff delay (the caller's own schedule); the failure still counts.
   */
  addRateLimited(key: string, atLeastMs = 0, insteadMs?: number): void {
    if (this.shuttingDown) return;
    this.metrics?.retry();
    const backoff = this.backoff.next(key);
    this.addAfter(key, Math.max(insteadMs ?? backoff, atLeastMs));
  }

  /** Resets `key`'s backoff; call after it was processed successfully (or deleted). */
  forget(key: string): void {
    this.backoff.forget(key);
  }

  /** Consecutive rate-limited requeues of `key` since the last forget (to give up after N). */
  numRequeues(key: string): number {
    return this.backoff.failures(key);
  }

  /**
   * Next key to process: fast lane first, FIFO within a lane. Waits while the queue is empty.
   * Resolves `undefined` once the queue is shut down. The caller must call done(key).
   */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.take();
    if (key !== undefined) {
      this.settle();
      return Promise.resolve(key);
    }
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  /** Marks `key` finished; re-queues it if it was added meanwhile. Unknown keys are ignored. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics?.workDuration(this.secondsSince(started));
    const lane = this.dirty.get(key);
    if (lane !== undefined) {
      this.dirty.delete(key);
      // Not enqueue(): the add was counted (and timed) when the key was marked dirty.
      (lane === "fast" ? this.fast : this.slow).add(key);
    }
    this.settle();
  }

  /**
   * Stops handing out keys: waiting get() calls resolve `undefined` now, delayed adds are
   * cancelled, and queued (and dirty) keys are dropped, since a level-triggered controller
   * re-lists everything on its next start. Keys in flight may still be done(). Idempotent.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const d of this.delayed.values()) d.cancel();
    this.delayed.clear();
    this.fast.clear();
    this.slow.clear();
    this.dirty.clear();
    this.addedAt.clear();
    const waiters = this.waiters.splice(0);
    for (const w of waiters) w(undefined);
    this.settle();
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Resolves once no key is being processed (immediately if none is). Pair with shutDown for graceful stop. */
  drained(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
    });
  }

  /**
   * Drops every queued, delayed or re-add-pending key that `match` selects, and its backoff
   * (another replica owns those keys now). Keys being processed finish; they are not re-queued.
   * Returns how many keys were dropped.
   */
  removeWhere(match: (key: string) => boolean): number {
    const dropped = new Set<string>();
    for (const lane of [this.fast, this.slow]) {
      for (const key of lane) {
        if (!match(key)) continue;
        lane.delete(key);
        dropped.add(key);
      }
    }
    for (const key of [...this.dirty.keys()]) {
      if (!match(key)) continue;
      this.dirty.delete(key);
      dropped.add(key);
    }
    for (const [key, d] of this.delayed) {
      if (!match(key)) continue;
      d.cancel();
      this.delayed.delete(key);
      dropped.add(key);
    }
    for (const key of dropped) {
      this.addedAt.delete(key);
      this.backoff.forget(key);
    }
    this.settle();
    return dropped.size;
  }

  /** Resolves once no key that `match` selects is being processed (immediately if none is). */
  idle(match: (key: string) => boolean): Promise<void> {
    if (![...this.processing.keys()].some(match)) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push({ match, resolve });
    });
  }

  /** Keys queued in either lane; excludes keys being processed and pending delayed adds. */
  depth(): number {
    return this.fast.size + this.slow.size;
  }

  processingCount(): number {
    return this.processing.size;
  }

  delayedCount(): number {
    return this.delayed.size;
  }

  /**
   * Work in flight, as client-go's unfinished-work gauges: seconds all current keys have been
   * processing in total, and the longest any one has. A stuck reconcile shows up here long
   * before its work duration is ever recorded.
   */
  unfinishedWork(): { totalSeconds: number; longestSeconds: number } {
    let totalSeconds = 0;
    let longestSeconds = 0;
    for (const started of this.processing.values()) {
      const s = this.secondsSince(started);
      totalSeconds += s;
      longestSeconds = Math.max(longestSeconds, s);
    }
    return { totalSeconds, longestSeconds };
  }

  private enqueue(key: string, lane: Lane): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      // Never give a key to a second worker; remember it instead. Fast wins over slow.
      if (!this.dirty.has(key)) this.counted(key);
      if (lane === "fast" || !this.dirty.has(key)) this.dirty.set(key, lane);
      return;
    }
    if (this.fast.has(key)) return;
    if (this.slow.has(key)) {
      if (lane === "slow") return;
      // A fresh event for a key that only waits for resync must not wait behind the resync storm.
      // Still the same add (its wait started in the slow lane), so not counted again.
      this.slow.delete(key);
    } else {
      this.counted(key);
    }
    (lane === "fast" ? this.fast : this.slow).add(key);
  }

  private counted(key: string): void {
    if (!this.metrics) return;
    this.metrics.add();
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.clock.now());
  }

  private secondsSince(ms: number): number {
    return Math.max(0, this.clock.now() - ms) / 1000;
  }

  private take(): string | undefined {
    const lane = this.fast.size > 0 ? this.fast : this.slow;
    const first = lane.values().next();
    if (first.done === true) return undefined;
    const key = first.value;
    lane.delete(key);
    const now = this.clock.now();
    this.processing.set(key, now);
    const added = this.addedAt.get(key);
    if (added !== undefined) {
      this.addedAt.delete(key);
      this.metrics?.queueDuration(Math.max(0, now - added) / 1000);
    }
    return key;
  }

  /** Hands queued keys to waiting workers, then publishes depth and drain state. */
  private settle(): void {
    while (this.waiters.length > 0) {
      const key = this.take();
      if (key === undefined) break;
      // The key is marked processing synchronously, before the worker's continuation runs.
      this.waiters.shift()!(key);
    }
    if (this.processing.size === 0 && this.drainWaiters.length > 0) {
      for (const d of this.drainWaiters.splice(0)) d();
    }
    if (this.idleWaiters.length > 0) {
      const busy = [...this.processing.keys()];
      for (let i = this.idleWaiters.length - 1; i >= 0; i--) {
        const w = this.idleWaiters[i]!;
        if (busy.some(w.match)) continue;
        this.idleWaiters.splice(i, 1);
        w.resolve();
      }
    }
    const depth = this.depth();
    if (depth !== this.reportedDepth) {
      this.reportedDepth = depth;
      this.onDepth?.(depth);
    }
  }
}

export interface RunWorkersOptions {
  /**
   * Called when `handle` throws or rejects, after the key was re-queued with addRateLimited.
   * Defaults to console.error so failures are never silent.
   */
  onError?: (key: string, error: unknown) => void;
}

/**
 * Runs `concurrency` workers that each loop get() → handle(key) → done(key) until the queue
 * is shut down; resolves once every worker has exited (in-flight handlers finish first).
 *
 * Contract for `handle`: on success call queue.forget(key) yourself (and addAfter for
 * "requeue after"); throwing re-queues the key with backoff. runWorkers does not forget on
 * success itself, because that would reset a backoff the handler just extended.
 */
export async function runWorkers(
  queue: WorkQueue,
  concurrency: number,
  handle: (key: string) => Promise<void> | void,
  options: RunWorkersOptions = {},
): Promise<void> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`runWorkers: concurrency must be a positive integer, got ${concurrency}`);
  }
  const onError =
    options.onError ??
    ((key: string, error: unknown) => {
      console.error(`workqueue: handler failed for ${key}; requeued with backoff`, error);
    });
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await handle(key);
      } catch (error) {
        // a Retry-After may sit on a wrapped TransientError, so read it through the cause chain
        queue.addRateLimited(key, transientRetryAfter(error) ?? 0, transientBackoff(error));
        try {
          onError(key, error);
        } catch {
          // A broken error reporter must not kill the worker and strand the queue.
        }
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
