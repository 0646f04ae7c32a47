// The demo's running commentary on stderr: every line stamped with the time
// since the demo started, so a person sees where the seconds go.
import { performance } from "node:perf_hooks";

export class Narrator {
  private readonly t0 = performance.now();
  private readonly write: (s: string) => void;
  private readonly mutedBy: AbortSignal | undefined;

  /** Once `mutedBy` aborts, `say` is silent: work an interruption overtook should not talk over the teardown. */
  constructor(opts: { write?: (s: string) => void; mutedBy?: AbortSignal } = {}) {
    this.write = opts.write ?? ((s) => process.stderr.write(s));
    this.mutedBy = opts.mutedBy;
  }

  /** Seconds since start, e.g. "12.3s". */
  elapsed(): string {
    return `${((performance.now() - this.t0) / 1000).toFixed(1)}s`;
  }

  say(message: string): void {
    if (!this.mutedBy?.aborted) this.sayAlways(message);
  }

  /** For the interruption and the teardown themselves. */
  sayAlways(message: string): void {
    this.write(`[${this.elapsed().padStart(6)}] ${message}\n`);
  }

  /** Announces a step, runs it, and reports how long it took. */
  async step<T>(what: string, fn: () => Promise<T>, done: (value: T) => string = () => "done"): Promise<T> {
    this.say(`${what} ...`);
    const start = performance.now();
    const value = await fn();
    this.say(`  ${done(value)} (${((performance.now() - start) / 1000).toFixed(1)}s)`);
    return value;
  }
}
