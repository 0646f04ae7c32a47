// The frame the dashboard run stands in: integer flags, a log on stderr, and a bounded run (a global
// deadline, SIGINT/SIGTERM, and a last-resort SIGKILL of the processes it started, by pid, if
// teardown itself hangs).
import { BoundedRun as HarnessBoundedRun, sleep } from "@quarry/harness/bounded-run";

export const log = (msg: string): void => {
  process.stderr.write(`[dashboard] ${msg}\n`);
};

export { sleep };

/** Parses an integer flag, or prints `usage` and exits 2. */
export function intFlag(name: string, raw: string, min: number, usage: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be an integer >= ${min}, got "${raw}"\n${usage}`);
    process.exit(2);
  }
  return n;
}

/** A bounded run (`@quarry/harness/bounded-run`) that logs to the dashboard's log. */
export class BoundedRun extends HarnessBoundedRun {
  constructor(deadlineS: number) {
    super(deadlineS, log);
  }
}
