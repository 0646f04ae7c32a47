// CPU of a group of processes that are not the bench's children and come and
// go (containerd's shims, one per pod sandbox, each reaping its runc calls and
// its containers): sampled every `intervalMs`, each process's utime + stime +
// cutime + cstime, summed over the group as it grows. A process that exits
// between two samples loses what it used since the last one, so the figure is
// a lower bound.
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { clkTck } from "./proc.ts";

export class ProcessGroupCpu {
  private readonly match: (comm: string, cmdline: () => string) => boolean;
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
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        continue; // gone
      }
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const cmdline = () => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        } catch {
          return "";
        }
      };
      if (!this.match(comm, cmdline)) {
        this.others.add(pid);
        continue;
      }
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields 14-17 (utime, stime, cutime, cstime); 22 is the start time, which tells reused pids apart
      const cpu = f.slice(11, 15).reduce((a, b) => a + Number(b), 0) / clkTck();
      const key = `${pid}@${f[19]}`;
      const before = this.seen.get(key);
      // a process first seen counts from zero, except those already running at the first sample
      this.total += cpu - (before ?? (this.series.length === 0 ? cpu : 0));
      this.seen.set(key, cpu);
    }
    this.series.push([performance.now(), this.total]);
  }

  /** Seconds used between two performance.now() moments (nearest samples at or before them). */
  between(from: number, to: number): number {
    const at = (t: number) => {
      let v = 0;
      for (const [when, total] of this.series) if (when <= t) v = total;
      return v;
    };
    return at(to) - at(from);
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}
