import type { Meter } from "@quarry/observability";

/** quarry_run_enforcements_total{reason, kind}: every time the run-controller stepped in. */
export function enforcementCounter(meter: Meter): (reason: string, flavour: string) => void {
  const counter = meter.createCounter("quarry_run_enforcements_total", {
    description:
      "Runs and CustomRuns whose outcome the run-controller set to enforce the custom-task contract",
  });
  return (reason, flavour) => counter.add(1, { reason, kind: flavour });
}
