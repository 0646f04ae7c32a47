// Memory and CPU of one side's processes (Quarry's services, or Tekton's controller and
// resolvers) over a measured window: peak RSS of each process (VmHWM), the sampled peak of the
// process and its children together (PSS, so git processes a resolver runs count), and CPU used
// in the window including reaped children (utime + stime + cutime + cstime).
import { reapedChildrenCpuSeconds, TreeRssSampler } from "./git-procs.ts";
import { cpuSeconds, vmKiB } from "./proc.ts";
import { round } from "./stats.ts";

export interface ProcessFigures {
  name: string;
  pid: number;
  /** VmHWM of the process itself, MiB */
  peakRssMiB: number;
  /** largest sampled PSS of the process and its descendants (git), MiB */
  treePeakMiB: number;
  /** CPU seconds in the window, children included */
  cpuSeconds: number;
}

const cpuWithChildren = (pid: number) => (cpuSeconds(pid) ?? 0) + reapedChildrenCpuSeconds(pid);

export class SideStats {
  private readonly procs: { name: string; pid: number; sampler: TreeRssSampler; cpu0: number }[];

  constructor(procs: readonly { name: string; pid: number }[]) {
    this.procs = procs.map((p) => ({
      ...p,
      sampler: new TreeRssSampler(p.pid, 200),
      cpu0: cpuWithChildren(p.pid),
    }));
  }

  /** Read before the processes stop. */
  final(): ProcessFigures[] {
    return this.procs.map((p) => {
      p.sampler.stop();
      return {
        name: p.name,
        pid: p.pid,
        peakRssMiB: round((vmKiB(p.pid, "VmHWM") ?? Number.NaN) / 1024, 1),
        treePeakMiB: round(p.sampler.maxTreeKiB / 1024, 1),
        cpuSeconds: round(cpuWithChildren(p.pid) - p.cpu0, 2),
      };
    });
  }
}

/** The side's totals: every process's figures summed. */
export function sumFigures(procs: readonly ProcessFigures[]): {
  peakRssMiB: number;
  treePeakMiB: number;
  cpuSeconds: number;
} {
  const sum = (f: (p: ProcessFigures) => number) =>
    round(
      procs.reduce((a, p) => a + f(p), 0),
      2,
    );
  return {
    peakRssMiB: sum((p) => p.peakRssMiB),
    treePeakMiB: sum((p) => p.treePeakMiB),
    cpuSeconds: sum((p) => p.cpuSeconds),
  };
}
