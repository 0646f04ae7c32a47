// Everything the demo starts registers how to stop it here, so a failure or
// Ctrl-C at any step stops exactly what was started, newest first.

export class Teardown {
  private readonly steps: { what: string; fn: () => Promise<unknown> }[] = [];
  private running: Promise<void> | undefined;

  add(what: string, fn: () => Promise<unknown>): void {
    this.steps.push({ what, fn });
  }

  /** Runs every step once, newest first; a failing step is reported and the rest still run. */
  run(report: (message: string) => void): Promise<void> {
    this.running ??= (async () => {
      for (let step = this.steps.pop(); step; step = this.steps.pop()) {
        try {
          await step.fn();
        } catch (err) {
          report(`could not stop ${step.what}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    })();
    return this.running;
  }
}
