// A process's RSS over a run: VmRSS sampled every second (a time series,
// not only the peak), checkpoints taken at chosen moments beside a count the
// benchmark supplies (e.g. the objects left in a namespace), and the slope of
// the series' later part, to tell "flat once steady" from "still growing".
import { performance } from "node:perf_hooks";
import { vmKiB } from "./proc.ts";
import { round } from "./stats.ts";

export interface RssPoint {
  /** seconds since the series started */
  t: number;
  rssMiB: number;
}

export interface RssCheckpoint extends RssPoint {
  /** what the checkpoint is, e.g. "25 % sent" */
  label: string;
  /** the benchmark's own count at that moment (e.g. requests left in the namespace) */
  count?: number;
  /** the V8 heap in use at that moment, if the benchmark can read it (RSS keeps V8's high-water mark; this does not) */
  heapUsedMiB?: number;
}

const MiB = (kib: number) => round(kib / 1024, 1);

export class RssSeries {
  readonly points: RssPoint[] = [];
  readonly checkpoints: RssCheckpoint[] = [];
  private readonly pid: number;
  private readonly start = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(pid: number, intervalMs = 1000) {
    this.pid = pid;
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private now(): number {
    return round((performance.now() - this.start) / 1000, 1);
  }

  private sample(): RssPoint | undefined {
    const kib = vmKiB(this.pid, "VmRSS");
    if (kib === undefined) return undefined;
    const p = { t: this.now(), rssMiB: MiB(kib) };
    this.points.push(p);
    return p;
  }

  /** Records RSS now under `label`, with the benchmark's count and the heap in use in bytes (each read by a function, awaited). */
  async checkpoint(
    label: string,
    count?: () => Promise<number>,
    heapUsedBytes?: () => Promise<number>,
  ): Promise<RssCheckpoint | undefined> {
    const p = this.sample();
    if (!p) return undefined;
    const c: RssCheckpoint = { label, ...p };
    this.checkpoints.push(c);
    const [n, heap] = await Promise.all([
      count?.().catch(() => undefined),
      heapUsedBytes?.().catch(() => undefined),
    ]);
    if (n !== undefined) c.count = n;
    if (heap !== undefined && Number.isFinite(heap)) c.heapUsedMiB = MiB(heap / 1024);
    return c;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Least-squares slope of RSS (KiB per second) over the samples with t in [from, to] seconds:
   * near 0 when memory is flat there, positive while it still grows.
   */
  slopeKiBPerSecond(from: number, to: number): number {
    const pts = this.points.filter((p) => p.t >= from && p.t <= to);
    if (pts.length < 2) return Number.NaN;
    const n = pts.length;
    const mt = pts.reduce((a, p) => a + p.t, 0) / n;
    const mr = pts.reduce((a, p) => a + p.rssMiB, 0) / n;
    let num = 0;
    let den = 0;
    for (const p of pts) {
      num += (p.t - mt) * (p.rssMiB - mr);
      den += (p.t - mt) ** 2;
    }
    return den === 0 ? Number.NaN : round((num / den) * 1024, 1);
  }
}
