// Linux /proc readers for benchmarks: a process's memory (VmRSS, VmHWM) and
// CPU time (utime + stime), and a sampler that keeps the largest VmRSS seen.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let clockTicks: number | undefined;

/** Clock ticks per second (USER_HZ), the unit of utime/stime in /proc/<pid>/stat. */
export function clkTck(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** A `Vm*` field of /proc/<pid>/status in KiB, or undefined when the process is gone. */
export function vmKiB(pid: number, field: "VmRSS" | "VmHWM"): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

interface Stat {
  comm: string;
  ppid: number;
  /** utime + stime in seconds */
  cpuSeconds: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may itself contain spaces or parentheses
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  const comm = text.slice(open + 1, close);
  // fields after comm, starting at field 3 (state)
  const rest = text
    .slice(close + 2)
    .trim()
    .split(" ");
  const field = (n: number) => Number(rest[n - 3]);
  return { comm, ppid: field(4), cpuSeconds: (field(14) + field(15)) / clkTck() };
}

/** utime + stime of a process in seconds, or undefined when it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  return readStat(pid)?.cpuSeconds;
}

/** Direct children of `parent` whose command name is `comm` (e.g. the control plane's processes). */
export function childPids(parent: number, comm: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const st = readStat(Number(entry));
    if (st && st.ppid === parent && st.comm === comm) out.push(Number(entry));
  }
  return out;
}

/** Samples VmRSS every `intervalMs` and keeps the maximum (KiB). */
export class RssSampler {
  maxKiB = 0;
  samples = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly pid: number;

  constructor(pid: number, intervalMs = 200) {
    this.pid = pid;
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    const kib = vmKiB(this.pid, "VmRSS");
    if (kib === undefined) return;
    this.samples++;
    if (kib > this.maxKiB) this.maxKiB = kib;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Busy CPU seconds of the whole machine since boot (all CPUs; /proc/stat minus idle and iowait). */
export function machineBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!;
  return busy / clkTck();
}
