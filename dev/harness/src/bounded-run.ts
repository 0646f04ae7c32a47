// The frame a benchmark or a tool's long run stands in: a bounded run (a global
// deadline, SIGINT/SIGTERM, and a last-resort SIGKILL of the processes this run
// started, by pid, if teardown itself hangs).

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A run that stops by itself: `signal` aborts at the deadline or on the first
 * SIGINT/SIGTERM; a second signal, or teardown still running 60 s after the
 * deadline, SIGKILLs every pid given to `track` and exits 3.
 */
export class BoundedRun {
  private readonly controller = new AbortController();
  private readonly pids = new Set<number>();
  private readonly deadline: NodeJS.Timeout;

  /** `log` says which signal stopped the run. */
  constructor(deadlineS: number, log: (msg: string) => void) {
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

  /** The run's work is over: the deadline no longer applies (the hard stop still does). */
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
