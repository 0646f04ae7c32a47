// CPU used in a window (the measured phase) by named processes, the driver itself and the whole
// machine; `foreign` is what none of them used: other work on the machine, the sign of a noisy run.
import { cpuSeconds, machineBusySeconds } from "./proc.ts";
import { round } from "./stats.ts";

export interface CpuUse {
  /** utime + stime per named process, seconds */
  processes: Record<string, number>;
  benchDriver: number;
  /** the whole machine's busy CPU */
  machine: number;
  /** machine − everything above */
  foreign: number;
}

const cpuOf = (pid: number | undefined) => (pid ? (cpuSeconds(pid) ?? 0) : 0);

export class CpuWindow {
  private readonly pids: Record<string, number | undefined>;
  private readonly start: Record<string, number>;
  private readonly driver = process.cpuUsage();
  private readonly machine = machineBusySeconds();

  constructor(pids: Record<string, number | undefined>) {
    this.pids = pids;
    this.start = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuOf(pid)]));
  }

  /** CPU used since the window opened, rounded to 10 ms. */
  end(): CpuUse {
    const driver = process.cpuUsage(this.driver);
    const machine = machineBusySeconds() - this.machine;
    const processes = Object.fromEntries(
      Object.entries(this.pids).map(([name, pid]) => [name, cpuOf(pid) - (this.start[name] ?? 0)]),
    );
    const benchDriver = (driver.user + driver.system) / 1e6;
    const own = Object.values(processes).reduce((a, b) => a + b, 0) + benchDriver;
    return {
      processes: Object.fromEntries(Object.entries(processes).map(([k, v]) => [k, round(v, 2)])),
      benchDriver: round(benchDriver, 2),
      machine: round(machine, 2),
      foreign: round(machine - own, 2),
    };
  }
}
