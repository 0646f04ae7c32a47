// What the demo shows while it waits: nothing for the first second (most
// steps are done by then), then, on a terminal, a spinner line with the
// elapsed seconds redrawn in place; anywhere else (a pipe, a CI log) a
// "waiting for …" line, and another every ten seconds, so a slow step shows
// it is alive without flooding the log.

/** A wait shorter than this shows no progress at all. */
export const PROGRESS_AFTER_MS = 1_000;
/** Without a terminal, how often a long wait says it is still waiting. */
export const PLAIN_EVERY_MS = 10_000;
/** How often the spinner is redrawn on a terminal. */
export const SPIN_EVERY_MS = 100;

export const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;

/** Whole seconds: a progress line's clock ticks in seconds, the step's own report gives tenths. */
function wholeSeconds(ms: number): string {
  return `${Math.floor(ms / 1000)}s`;
}

/** The spinner line for a terminal, e.g. "⠙ waiting for the control plane (3s)". */
export function spinnerLine(what: string, elapsedMs: number, tick: number): string {
  return `${SPINNER[tick % SPINNER.length]} waiting for ${what} (${wholeSeconds(elapsedMs)})`;
}

/** The line a non-terminal gets, e.g. "waiting for the control plane (11s)". */
export function waitingLine(what: string, elapsedMs: number): string {
  return `waiting for ${what} (${wholeSeconds(elapsedMs)})`;
}

/** Without a terminal: the elapsed time at which the wait's next line is due, given how many it printed. */
export function nextPlainLineAt(printed: number): number {
  return PROGRESS_AFTER_MS + printed * PLAIN_EVERY_MS;
}

/** One wait in progress. */
interface Wait {
  what: string;
  start: number;
  printed: number;
}

export interface ProgressOptions {
  /** Writes raw text (no newline added). */
  write: (s: string) => void;
  /** A terminal gets the spinner; anything else the waiting lines. */
  tty: boolean;
  /** Writes one narration line (with the narrator's time stamp); used for the waiting lines. */
  line: (s: string) => void;
  now: () => number;
}

/**
 * The waits under way; the newest is the one shown (a story's wait for a
 * request nests inside the story). The narrator calls clear() before it
 * writes a line, so a spinner never runs into the narration.
 */
export class Progress {
  private readonly waits: Wait[] = [];
  private readonly opts: ProgressOptions;
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  /** Whether a spinner line is on screen (terminal only). */
  private drawn = false;

  constructor(opts: ProgressOptions) {
    this.opts = opts;
  }

  /** Shows progress for `work` until it settles; returns its result. */
  async track<T>(what: string, work: Promise<T>): Promise<T> {
    const wait: Wait = { what, start: this.opts.now(), printed: 0 };
    this.waits.push(wait);
    this.timer ??= setInterval(() => this.update(), this.opts.tty ? SPIN_EVERY_MS : 250);
    // an idle demo must still be able to exit: the work itself keeps the process alive
    this.timer.unref?.();
    try {
      return await work;
    } finally {
      this.waits.splice(this.waits.indexOf(wait), 1);
      if (this.waits.length === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.clear();
      }
    }
  }

  /** Removes the spinner line, if one is drawn, so the next line starts clean. */
  clear(): void {
    if (!this.drawn) return;
    this.opts.write("\r\x1b[K");
    this.drawn = false;
  }

  /** Called by the timer; exposed for tests. */
  update(): void {
    const wait = this.waits.at(-1);
    if (!wait) return;
    const elapsed = this.opts.now() - wait.start;
    if (elapsed < PROGRESS_AFTER_MS) return;
    if (this.opts.tty) {
      this.opts.write(`\r\x1b[K${spinnerLine(wait.what, elapsed, this.tick++)}`);
      this.drawn = true;
    } else if (elapsed >= nextPlainLineAt(wait.printed)) {
      wait.printed = Math.floor((elapsed - PROGRESS_AFTER_MS) / PLAIN_EVERY_MS) + 1;
      this.opts.line(`  ${waitingLine(wait.what, elapsed)}`);
    }
  }
}
