// Memory and CPU of one running service over its life: RSS and CPU when it
// became ready, VmRSS sampled every 200 ms, and VmHWM (peak RSS) plus total
// CPU read just before it is stopped; the set of services a benchmark runs,
// and their warnings.

import type { StartAs } from "@quarry/devcluster/scenario";
import type { RunningService } from "@quarry/devcluster/service";
import type { Scenario } from "@quarry/harness/scenario";
import { cpuSeconds, RssSampler, vmKiB } from "./proc.ts";
import { type BoundedRun, log, sleep } from "./run.ts";
import { round } from "./stats.ts";

export interface ServiceFigures {
  pid: number;
  aliveAtEnd: boolean;
  /** VmHWM just before stopping */
  peakRssMiB: number;
  sampledMaxRssMiB: number;
  rssSamples: number;
  rssAtReadyMiB: number;
  /** VmRSS just before stopping: what the service keeps once the benchmark is over */
  rssAtEndMiB: number;
  cpuSeconds: number;
  cpuSecondsStartup: number;
}

export const MiB = (kib: number | undefined): number =>
  kib === undefined ? Number.NaN : round(kib / 1024, 1);

export class ServiceStats {
  readonly svc: RunningService;
  private readonly sampler: RssSampler;
  private readonly readyRssKiB: number | undefined;
  private readonly readyCpu: number;

  /** Call right after the service is ready. */
  constructor(svc: RunningService) {
    this.svc = svc;
    this.sampler = new RssSampler(svc.pid, 200);
    this.readyRssKiB = vmKiB(svc.pid, "VmRSS");
    this.readyCpu = cpuSeconds(svc.pid) ?? 0;
  }

  /** The figures, read now (before stopping the service); stops the sampler. */
  async final(): Promise<ServiceFigures> {
    this.sampler.sample();
    this.sampler.stop();
    const pid = this.svc.pid;
    const alive = await Promise.race([this.svc.exited.then(() => false), sleep(0).then(() => true)]);
    return {
      pid,
      aliveAtEnd: alive,
      peakRssMiB: MiB(vmKiB(pid, "VmHWM")),
      sampledMaxRssMiB: MiB(this.sampler.maxKiB),
      rssSamples: this.sampler.samples,
      rssAtReadyMiB: MiB(this.readyRssKiB),
      rssAtEndMiB: MiB(vmKiB(pid, "VmRSS")),
      cpuSeconds: round(cpuSeconds(pid) ?? Number.NaN, 2),
      cpuSecondsStartup: round(this.readyCpu, 2),
    };
  }

  stopSampling(): void {
    this.sampler.stop();
  }
}

/** SIGTERM and wait up to 30 s for a graceful exit, then SIGKILL. */
export async function stopService(svc: RunningService): Promise<void> {
  const stopped = await Promise.race([svc.stop().then(() => true), sleep(30_000).then(() => false)]);
  if (!stopped) svc.kill("SIGKILL");
}

/**
 * The services a benchmark starts: each one's pid is tracked for the run's
 * hard stop, its memory and CPU followed from ready on; `stopAll` in the
 * benchmark's `finally`.
 */
export class BenchServices {
  readonly running: RunningService[] = [];
  readonly stats: ServiceStats[] = [];
  private readonly run: BoundedRun;
  private readonly logLevel: string;

  constructor(run: BoundedRun, logLevel: string) {
    this.run = run;
    this.logLevel = logLevel;
  }

  /** Starts `service` in the scenario's namespace (LOG_LEVEL set, `env` on top) and waits until it is ready. */
  start = async (
    scn: Scenario,
    service: string,
    env: Record<string, string> = {},
    as: StartAs = {},
  ): Promise<{ svc: RunningService; stats: ServiceStats }> => {
    const svc = await scn.start(service, { LOG_LEVEL: this.logLevel, ...env }, as);
    this.run.track(svc.pid);
    this.running.push(svc);
    const s = new ServiceStats(svc);
    this.stats.push(s);
    log(`${service} ready (pid ${svc.pid}) in namespace ${scn.namespace}`);
    return { svc, stats: s };
  };

  /**
   * Follows a service started elsewhere (a replica, from dev/harness/src/replicas.ts), as `start`
   * does: its pid for the run's hard stop, its memory and CPU from now on.
   */
  adopt = (svc: RunningService): ServiceStats => {
    this.run.track(svc.pid);
    this.running.push(svc);
    const s = new ServiceStats(svc);
    this.stats.push(s);
    return s;
  };

  /** Stops some of the services (SIGTERM, SIGKILL after 30 s) before the others, and forgets them. */
  async stop(svcs: readonly RunningService[]): Promise<void> {
    const gone = new Set(svcs);
    for (const s of this.stats) if (gone.has(s.svc)) s.stopSampling();
    await Promise.all(svcs.map(stopService));
    const keep = <T>(list: T[], svcOf: (t: T) => RunningService) => {
      const kept = list.filter((t) => !gone.has(svcOf(t)));
      list.splice(0, list.length, ...kept);
    };
    keep(this.running, (r) => r);
    keep(this.stats, (s) => s.svc);
  }

  async stopAll(): Promise<void> {
    for (const s of this.stats) s.stopSampling();
    await Promise.all(this.running.map(stopService));
  }
}

/** A service's warn/error log lines (pino level ≥ 40), grouped: "message: error" → count. */
export function logWarnings(svc: RunningService): Record<string, number> {
  const out: Record<string, number> = {};
  let text = "";
  try {
    text = svc.logs();
  } catch {
    return out;
  }
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const rec = JSON.parse(line) as { level?: unknown; msg?: unknown; err?: unknown };
      if (typeof rec.level !== "number" || rec.level < 40) continue;
      const err = typeof rec.err === "string" ? rec.err : JSON.stringify(rec.err ?? "");
      const key = `${String(rec.msg)}: ${err.slice(0, 200)}`;
      out[key] = (out[key] ?? 0) + 1;
    } catch {}
  }
  return out;
}
