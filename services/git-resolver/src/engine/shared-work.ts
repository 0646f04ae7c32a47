// Work several callers wait for, run at most once (a blob batch, a ref
// lookup). A caller that gives up is rejected at once; the work's signal
// aborts only once every caller waiting for it has given up, and work nobody
// waits for any more before it starts is handed back to its owner to drop.

export type Work<V> = (signal: AbortSignal) => Promise<V>;

export class SharedWork<V> {
  private readonly controller = new AbortController();
  private readonly outcome: Promise<V>;
  private resolve: (v: V) => void = () => {};
  private reject: (err: unknown) => void = () => {};
  private waiting = 0;
  private running = false;

  constructor() {
    this.outcome = new Promise<V>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    // outcomes reach the waiters; this keeps work everyone left from an unhandled rejection
    this.outcome.catch(() => {});
  }

  /** Callers still waiting for the outcome. */
  get waiters(): number {
    return this.waiting;
  }

  get started(): boolean {
    return this.running;
  }

  /** Runs `work` with the shared signal; the returned promise settles (never rejects) once the outcome is in. */
  start(work: Work<V>): Promise<void> {
    this.running = true;
    let out: Promise<V>;
    try {
      out = work(this.controller.signal);
    } catch (err) {
      out = Promise.reject(err);
    }
    return out.then(this.resolve, this.reject);
  }

  /**
   * The outcome, or a rejection with `signal`'s reason as soon as it aborts. When the last
   * waiter leaves, started work is aborted; `abandoned` is called for work not started yet.
   */
  wait(signal: AbortSignal, abandoned: () => void): Promise<V> {
    this.waiting++;
    return new Promise<V>((resolve, reject) => {
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        this.waiting--;
        signal.removeEventListener("abort", onAbort);
        return true;
      };
      const onAbort = () => {
        if (!settle()) return;
        if (this.waiting === 0) {
          if (this.running) this.controller.abort(signal.reason);
          else abandoned();
        }
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.outcome.then(
        (v) => settle() && resolve(v),
        (err: unknown) => settle() && reject(err),
      );
    });
  }
}
