// The frame every benchmark runs in: a log on stderr, and a bounded run (a
// global deadline, SIGINT/SIGTERM, and a last-resort SIGKILL of the processes
// this run started, by pid, if teardown itself hangs).

export const log = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A run that stops by itself: `signal` aborts at the deadline or on the first
 * SIGINT/SIGTERM; a second signal, or teardown still running 60 s after the
 * deadline, SIGKILLs every pid given to `track` and exits 3.
 */
export class BoundedRun {
  readonly deadlineS: number;
  private readonly controller = new AbortController();
  private readonly pids = new Set<number>();
  private readonly deadline: NodeJS.Timeout;

  constructor(deadlineS: number) {
    this.deadlineS = deadlineS;
    this.deadline = setTimeout(
      () => this.controller.abort(new Error(`global deadline of ${deadlineS}s reached`)),
      deadlineS * 1000,
    );
    setTimeout(() => this.hardStop(), (deadlineS + 60) * 1000).unref();
    let signals = 0;
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      process.on(sig, () => {
        if (++signals > 1) this.hardStop();
        log(`${sig}: stopping`);
        this.controller.abort(new Error(`interrupted by ${sig}`));
      });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A process this run started, killed by pid if teardown hangs. */
  track(pid: number | undefined): void {
    if (pid !== undefined && pid > 0) this.pids.add(pid);
  }

  /** The measured work is over: the deadline no longer applies (the hard stop still does). */
  finish(): void {
    clearTimeout(this.deadline);
  }

  private hardStop(): never {
    for (const pid of this.pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    process.exit(3);
  }
}
