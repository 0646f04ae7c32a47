// The demo's running commentary on stderr: every line stamped with the time
// since the demo started, so a person sees where the seconds go; progress
// while a step takes more than a second (progress.ts); and the rows of the
// summary table the demo ends with (summary.ts).
import { performance } from "node:perf_hooks";
import { Progress } from "./progress.ts";
import { type SummaryRow, shortReason } from "./summary.ts";

export interface NarratorOptions {
  write?: (s: string) => void;
  /** Once it aborts, `say` is silent: work an interruption overtook should not talk over the teardown. */
  mutedBy?: AbortSignal;
  /** Whether `write` goes to a terminal (a spinner) or not (waiting lines); default: stderr's. */
  tty?: boolean;
  /** Milliseconds, monotonic; for tests. */
  now?: () => number;
}

export class Narrator {
  /** Milliseconds on the narrator's clock. */
  readonly now: () => number;
  private readonly t0: number;
  private readonly write: (s: string) => void;
  private readonly mutedBy: AbortSignal | undefined;
  private readonly progress: Progress;
  /** The summary table's rows, in the order the steps ended. */
  readonly rows: SummaryRow[] = [];

  constructor(opts: NarratorOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
    this.t0 = this.now();
    this.write = opts.write ?? ((s) => process.stderr.write(s));
    this.mutedBy = opts.mutedBy;
    const tty = opts.tty ?? (opts.write === undefined && process.stderr.isTTY === true);
    this.progress = new Progress({
      write: (s) => this.write(s),
      tty,
      // the teardown's own wait talks even after an interruption
      line: (s) => (this.mutedBy?.aborted ? this.sayAlways(s) : this.say(s)),
      now: this.now,
    });
  }

  /** Seconds since start, e.g. "12.3s". */
  elapsed(): string {
    return `${((this.now() - this.t0) / 1000).toFixed(1)}s`;
  }

  say(message: string): void {
    if (!this.mutedBy?.aborted) this.sayAlways(message);
  }

  /** For the interruption and the teardown themselves. */
  sayAlways(message: string): void {
    this.progress.clear();
    this.write(`[${this.elapsed().padStart(6)}] ${message}\n`);
  }

  /** Shows progress while `work` runs longer than a second ("waiting for <what>"). */
  waitFor<T>(what: string, work: Promise<T>): Promise<T> {
    return this.progress.track(what, work);
  }

  /**
   * Announces a setup step, runs it with progress, reports how long it took,
   * and records it in the summary as `asked`: a few words naming what the step
   * brings up ("the embedded control plane"), which its progress line waits
   * for; `what` is the narration's longer line.
   */
  async step<T>(
    what: string,
    fn: () => Promise<T>,
    done: (value: T) => string = () => "done",
    asked: string = what,
  ): Promise<T> {
    this.say(`${what} ...`);
    const start = this.now();
    const value = await this.record(
      "setup",
      asked,
      () => this.waitFor(asked, fn()),
      () => ({
        outcome: "done",
        reason: "",
      }),
    );
    this.say(`  ${done(value)} (${((this.now() - start) / 1000).toFixed(1)}s)`);
    return value;
  }

  /**
   * Runs one step of the walk-through and records its row: the outcome and
   * reason `result` reads from its value, or "failed" and the error if it throws.
   */
  async record<T>(
    step: string,
    asked: string,
    fn: () => Promise<T>,
    result: (value: T) => { outcome: string; reason: string },
    /** When the step began, if before this call (a request's clock runs from its creation). */
    start: number = this.now(),
  ): Promise<T> {
    try {
      const value = await fn();
      this.rows.push({ step, asked, ...result(value), durationMs: this.now() - start });
      return value;
    } catch (err) {
      const reason = shortReason(err instanceof Error ? err.message : String(err));
      this.rows.push({ step, asked, outcome: "failed", reason, durationMs: this.now() - start });
      throw err;
    }
  }
}
