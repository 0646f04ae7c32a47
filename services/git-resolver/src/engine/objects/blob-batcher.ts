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

import { SharedWork } from "../shared-work.ts";

type Run = (items: string[], signal: AbortSignal) => Promise<void>;

interface Batch {
  readonly items: Set<string>;
  run: Run;
  readonly work: SharedWork<void>;
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
      batch = { items: new Set(), run, work: new SharedWork<void>() };
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
    if (!next || next.work.waiters === 0) {
      if (!slot.running && !slot.next && this.slots.get(key) === slot) this.slots.delete(key);
      return;
    }
    slot.running = next;
    this.batches++;
    this.items += next.items.size;
    next.work
      .start((signal) => next.run([...next.items], signal))
      .finally(() => {
        slot.running = undefined;
        this.startNext(key, slot);
      });
  }

  private wait(key: string, slot: Slot, batch: Batch, signal: AbortSignal): Promise<void> {
    return batch.work.wait(signal, () => {
      if (slot.next !== batch) return;
      slot.next = undefined;
      if (!slot.running && this.slots.get(key) === slot) this.slots.delete(key);
    });
  }
}
