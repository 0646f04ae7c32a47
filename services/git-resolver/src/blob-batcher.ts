// Batching of missing blobs per repository: a burst of first reads of
// different files becomes a few fetches of many blobs each instead of one
// fetch (two HTTP requests, a git upload-pack on the server, a pack in the
// cache) per blob.
//
// Per key one batch runs at a time. A blob asked for while none runs waits
// `windowMs` for company; one asked for while a batch runs joins that batch
// if the batch holds it already, else the next batch, which starts as soon
// as the running one ends. Objects are content-addressed, so, unlike ref
// lookups, an answer from a batch started earlier is as good as a later one.
// A batch's signal aborts only once everyone waiting for it has given up.

type Run = (items: string[], signal: AbortSignal) => Promise<void>;

interface Batch {
  readonly items: Set<string>;
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
  run: Run;
  waiters: number;
  readonly controller: AbortController;
  started: boolean;
}

interface Slot {
  running: Batch | undefined;
  next: Batch | undefined;
}

export class BlobBatcher {
  private readonly slots = new Map<string, Slot>();
  private readonly windowMs: number;
  /** Batches started, and items in them (tests, metrics). */
  batches = 0;
  items = 0;

  constructor(opts: { windowMs?: number } = {}) {
    this.windowMs = opts.windowMs ?? 5;
  }

  get size(): number {
    return this.slots.size;
  }

  /** Resolves once a batch holding `item` has run; `run` is used if this call starts a batch. */
  add(key: string, item: string, signal: AbortSignal, run: Run): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { running: undefined, next: undefined };
      this.slots.set(key, slot);
    }
    if (slot.running?.items.has(item)) return this.wait(key, slot, slot.running, signal);
    let batch = slot.next;
    if (!batch) {
      batch = newBatch(run);
      slot.next = batch;
      if (!slot.running) {
        const s = slot;
        setTimeout(() => this.startNext(key, s), this.windowMs);
      }
    }
    batch.items.add(item);
    return this.wait(key, slot, batch, signal);
  }

  private startNext(key: string, slot: Slot): void {
    if (slot.running) return;
    const next = slot.next;
    slot.next = undefined;
    if (!next || next.waiters === 0) {
      if (!slot.running && !slot.next && this.slots.get(key) === slot) this.slots.delete(key);
      return;
    }
    next.started = true;
    slot.running = next;
    this.batches++;
    this.items += next.items.size;
    let out: Promise<void>;
    try {
      out = next.run([...next.items], next.controller.signal);
    } catch (err) {
      out = Promise.reject(err);
    }
    out.then(next.resolve, next.reject).finally(() => {
      slot.running = undefined;
      this.startNext(key, slot);
    });
  }

  private wait(key: string, slot: Slot, batch: Batch, signal: AbortSignal): Promise<void> {
    batch.waiters++;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        batch.waiters--;
        signal.removeEventListener("abort", onAbort);
        return true;
      };
      const onAbort = () => {
        if (!settle()) return;
        if (batch.waiters === 0) {
          if (batch.started) batch.controller.abort(signal.reason);
          else if (slot.next === batch) {
            slot.next = undefined;
            if (!slot.running && this.slots.get(key) === slot) this.slots.delete(key);
          }
        }
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      batch.promise.then(
        () => settle() && resolve(),
        (err: unknown) => settle() && reject(err),
      );
    });
  }
}

function newBatch(run: Run): Batch {
  let resolve: () => void = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return {
    items: new Set(),
    promise,
    resolve,
    reject,
    run,
    waiters: 0,
    controller: new AbortController(),
    started: false,
  };
}
