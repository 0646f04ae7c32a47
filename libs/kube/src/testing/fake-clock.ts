import type { Clock } from "../time/clock.ts";

interface FakeTimer {
  at: number;
  // Insertion order breaks ties so timers due at the same instant fire in scheduling order.
  seq: number;
  fn: () => void;
}

/**
 * Manually driven clock for deterministic tests. Time only moves in advance(); timer callbacks
 * run synchronously inside advance(), so tests usually await a macrotask afterwards to let
 * promise continuations (e.g. workers woken by get()) run.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<FakeTimer>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: FakeTimer = { at: this.current + Math.max(0, ms || 0), seq: this.seq++, fn };
    this.timers.add(timer);
    return () => {
      this.timers.delete(timer);
    };
  }

  /**
   * Moves time forward by `ms`, firing every timer due within the window in time order, with
   * now() equal to each timer's deadline while it runs. Timers scheduled (or cancelled) by a
   * callback are honoured if they fall inside the window.
   */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    const target = this.current + ms;
    for (;;) {
      const next = this.earliest();
      if (next === undefined || next.at > target) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = target;
  }

  /** Number of timers scheduled and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** Deadline of the earliest pending timer, if any (handy for "advance to next"). */
  nextTimerAt(): number | undefined {
    return this.earliest()?.at;
  }

  private earliest(): FakeTimer | undefined {
    // Linear scan: test clocks hold a handful of timers, and a scan stays correct when
    // callbacks add or cancel timers mid-advance.
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
