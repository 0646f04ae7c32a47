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
// two. A lookup's signal aborts only once every caller sharing it has given
// up; a caller that gives up is rejected at once.

type Work<V> = (signal: AbortSignal) => Promise<V>;

interface Flight<V> {
  readonly promise: Promise<V>;
  resolve(v: V): void;
  reject(err: unknown): void;
  work: Work<V>;
  /** Callers still waiting for this flight. */
  waiters: number;
  readonly controller: AbortController;
  started: boolean;
}

interface Slot<V> {
  running: Flight<V> | undefined;
  next: Flight<V> | undefined;
}

export class FreshCoalescer<V> {
  private readonly slots = new Map<string, Slot<V>>();
  /** Lookups actually started (tests, metrics). */
  started = 0;

  /** Keys with a lookup running or queued (tests: nothing leaks). */
  get size(): number {
    return this.slots.size;
  }

  run(key: string, signal: AbortSignal, work: Work<V>): Promise<V> {
    if (signal.aborted) return Promise.reject(signal.reason);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { running: undefined, next: undefined };
      this.slots.set(key, slot);
    }
    let flight = slot.next;
    if (!flight) {
      flight = newFlight(work);
      slot.next = flight;
      if (!slot.running) {
        const queued = slot;
        setImmediate(() => this.startNext(key, queued));
      }
    }
    return this.wait(key, slot, flight, signal);
  }

  private start(key: string, slot: Slot<V>, flight: Flight<V>): void {
    flight.started = true;
    slot.running = flight;
    this.started++;
    let out: Promise<V>;
    try {
      out = flight.work(flight.controller.signal);
    } catch (err) {
      out = Promise.reject(err);
    }
    out.then(flight.resolve, flight.reject).finally(() => {
      slot.running = undefined;
      this.startNext(key, slot);
    });
  }

  /** Starts the queued lookup, if anyone still waits for it. */
  private startNext(key: string, slot: Slot<V>): void {
    if (slot.running) return;
    const next = slot.next;
    slot.next = undefined;
    if (next && next.waiters > 0) this.start(key, slot, next);
    else this.forget(key, slot);
  }

  private forget(key: string, slot: Slot<V>): void {
    if (!slot.running && !slot.next && this.slots.get(key) === slot) this.slots.delete(key);
  }

  private wait(key: string, slot: Slot<V>, flight: Flight<V>, signal: AbortSignal): Promise<V> {
    flight.waiters++;
    return new Promise<V>((resolve, reject) => {
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        flight.waiters--;
        signal.removeEventListener("abort", onAbort);
        return true;
      };
      const onAbort = () => {
        if (!settle()) return;
        if (flight.waiters === 0) {
          if (flight.started) flight.controller.abort(signal.reason);
          else if (slot.next === flight) {
            // nobody wants it any more: it never starts
            slot.next = undefined;
            this.forget(key, slot);
          }
        }
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      flight.promise.then(
        (v) => settle() && resolve(v),
        (err: unknown) => settle() && reject(err),
      );
    });
  }
}

function newFlight<V>(work: Work<V>): Flight<V> {
  let resolve: (v: V) => void = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<V>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // outcomes reach the waiters; this keeps a flight everyone left from an unhandled rejection
  promise.catch(() => {});
  return { promise, resolve, reject, work, waiters: 0, controller: new AbortController(), started: false };
}
