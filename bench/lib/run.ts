// The frame every benchmark runs in: a log on stderr and the harness's bounded run.
import { BoundedRun as HarnessBoundedRun, sleep } from "@quarry/harness/bounded-run";

export const log = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};

export { sleep };

/** A bounded run (`@quarry/harness/bounded-run`) that logs to the benchmark's log. */
export class BoundedRun extends HarnessBoundedRun {
  constructor(deadlineS: number) {
    super(deadlineS, log);
  }
}
