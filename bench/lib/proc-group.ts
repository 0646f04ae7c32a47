// CPU of processes that are not the bench's children and come and go (containerd's shims, one per pod
// sandbox, each reaping its runc calls and containers): each one's utime + stime + cutime + cstime,
// sampled every `intervalMs` and summed over the group as it grows. A process that exits between two
// samples loses what it used since the last one: a lower bound.
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { clkTck } from "./proc.ts";

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined; // gone
  }
};

export class ProcessGroupCpu {
  private readonly match: (comm: string, cmdline: () => string) => boolean;
  /** CPU seconds at the last sample, by pid@starttime (pids are reused) */
  private readonly seen = new Map<string, number>();
  /** pids that did not match: never read again (a shim is started as one, it does not become one) */
  private readonly others = new Set<string>();
  /** (performance.now(), cumulative seconds) after each sample */
  private readonly series: [number, number][] = [];
  private total = 0;
  private readonly timer: NodeJS.Timeout;

  /** `match` gets the command name and, to read only when the name matches, the command line. */
  constructor(match: (comm: string, cmdline: () => string) => boolean, intervalMs = 300) {
    this.match = match;
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid) || this.others.has(pid)) continue;
      const stat = read(`/proc/${pid}/stat`);
      if (stat === undefined) continue;
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (!this.match(comm, () => (read(`/proc/${pid}/cmdline`) ?? "").replaceAll("\0", " "))) {
        this.others.add(pid);
        continue;
      }
      // after the comm: fields 14-17 are utime, stime, cutime, cstime; 22 the start time
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cpu = f.slice(11, 15).reduce((a, b) => a + Number(b), 0) / clkTck();
      const key = `${pid}@${f[19]}`;
      // a process counts from when it is first seen, from zero, but those running at the first sample
      this.total += cpu - (this.seen.get(key) ?? (this.series.length === 0 ? cpu : 0));
      this.seen.set(key, cpu);
    }
    this.series.push([performance.now(), this.total]);
  }

  /** Seconds used between two performance.now() moments (the last samples at or before them). */
  between(from: number, to: number): number {
    const at = (t: number) => this.series.findLast(([when]) => when <= t)?.[1] ?? 0;
    return at(to) - at(from);
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}
