// Memory and CPU of one running service over its life: RSS and CPU when it
// became ready, VmRSS sampled every 200 ms, and VmHWM (peak RSS) plus total
// CPU read just before it is stopped.
import type { RunningService } from "../../e2e/harness/service.ts";
import { cpuSeconds, RssSampler, vmKiB } from "./proc.ts";
import { sleep } from "./run.ts";
import { round } from "./stats.ts";

export interface ServiceFigures {
  pid: number;
  aliveAtEnd: boolean;
  /** VmHWM just before stopping */
  peakRssMiB: number;
  sampledMaxRssMiB: number;
  rssSamples: number;
  rssAtReadyMiB: number;
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
