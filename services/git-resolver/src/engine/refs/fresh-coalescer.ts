// Coalescing of identical lookups whose answer may change over time (a
// branch moving): concurrent callers with the same key share one lookup, but
// only a lookup that STARTED after the caller arrived may answer it, so
// nobody is told an older state than the one current when they asked.
//
//   a caller arrives, nothing runs for its key      → a lookup starts on the
//                                                     next turn of the event
//                                                     loop (callers arriving
//                                                     before then share it)
//   a caller arrives, a lookup runs (it started     → the caller waits for the
//   before the caller arrived, so it may be stale)    next lookup, started when
//                                                     the running one settles;
//                                                     every caller arriving
//                                                     meanwhile shares it
//
// At most one lookup per key runs at a time and a caller waits for at most
// two. With a minimum interval, a queued lookup also waits until that long
// after the previous one started: a sustained burst then asks the server at
// most once per interval per key, for at most an interval more of latency,
// and a caller that finds no lookup running or queued is not held back. A
// lookup's signal aborts only once every caller sharing it has given up; a
// caller that gives up is rejected at once.

import { SharedWork, type Work } from "../shared-work.ts";

interface Flight<V> {
  work: Work<V>;
  readonly shared: SharedWork<V>;
}

interface Slot<V> {
  running: Flight<V> | undefined;
  next: Flight<V> | undefined;
  /** When the last lookup for this key started (performance.now()). */
  lastStart: number;
  /** A paced start is scheduled. */
  paced: boolean;
  /** The interval the latest caller asked for. */
  minIntervalMs: number;
}

export class FreshCoalescer<V> {
  private readonly slots = new Map<string, Slot<V>>();
  private readonly minIntervalMs: number;
  /** Lookups actually started (tests, metrics). */
  started = 0;

  /**
   * `minIntervalMs`: a lookup that queued behind a running one starts no sooner than this long
   * after the running one started, so a sustained burst asks the server at most once per
   * interval per key (every caller still gets an answer from a lookup started after it arrived).
   */
  constructor(opts: { minIntervalMs?: number } = {}) {
    this.minIntervalMs = opts.minIntervalMs ?? 0;
  }

  /** Keys with a lookup running or queued (tests: nothing leaks). */
  get size(): number {
    return this.slots.size;
  }

  /** `minIntervalMs`, when given, replaces the constructor's for this key from now on (live config). */
  run(key: string, signal: AbortSignal, work: Work<V>, minIntervalMs?: number): Promise<V> {
    if (signal.aborted) return Promise.reject(signal.reason);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = {
        running: undefined,
        next: undefined,
        lastStart: Number.NEGATIVE_INFINITY,
        paced: false,
        minIntervalMs: this.minIntervalMs,
      };
      this.slots.set(key, slot);
    }
    if (minIntervalMs !== undefined) slot.minIntervalMs = minIntervalMs;
    let flight = slot.next;
    if (!flight) {
      flight = { work, shared: new SharedWork<V>() };
      slot.next = flight;
      if (!slot.running && !slot.paced) {
        const queued = slot;
        setImmediate(() => this.startNext(key, queued));
      }
    }
    return this.wait(key, slot, flight, signal);
  }

  private start(key: string, slot: Slot<V>, flight: Flight<V>): void {
    slot.running = flight;
    slot.lastStart = performance.now();
    this.started++;
    flight.shared.start(flight.work).finally(() => {
      slot.running = undefined;
      const wait = slot.lastStart + slot.minIntervalMs - performance.now();
      if (wait <= 0 || !slot.next) {
        this.startNext(key, slot);
        return;
      }
      slot.paced = true;
      setTimeout(() => {
        slot.paced = false;
        this.startNext(key, slot);
      }, wait);
    });
  }

  /** Starts the queued lookup, if anyone still waits for it. */
  private startNext(key: string, slot: Slot<V>): void {
    if (slot.running) return;
    const next = slot.next;
    slot.next = undefined;
    if (next && next.shared.waiters > 0) this.start(key, slot, next);
    else this.forget(key, slot);
  }

  private forget(key: string, slot: Slot<V>): void {
    if (!slot.running && !slot.next && !slot.paced && this.slots.get(key) === slot) this.slots.delete(key);
  }

  private wait(key: string, slot: Slot<V>, flight: Flight<V>, signal: AbortSignal): Promise<V> {
    return flight.shared.wait(signal, () => {
      if (slot.next !== flight) return;
      // nobody wants it any more: it never starts
      slot.next = undefined;
      this.forget(key, slot);
    });
  }
}
