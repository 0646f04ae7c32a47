// Report pieces more than one benchmark uses: the same-run floor's JSON, a markdown table.
import type { PhaseResult } from "./phase.ts";
import type { ServiceFigures } from "./service-stats.ts";

export interface FloorRun {
  phase: PhaseResult;
  controller: ServiceFigures;
}

export function floorJson(floor: FloorRun | undefined) {
  if (!floor) return undefined;
  const p = floor.phase;
  return {
    completed: p.completed,
    latencyMs: p.latencyMs,
    breakdown: p.breakdown,
    wallSeconds: p.wallSeconds,
    throughputPerSecond: p.throughputPerSecond,
    cpuSecondsMeasured: p.cpu,
    apiCalls: p.apiCalls,
    controller: floor.controller,
  };
}

/** A markdown table: the header's cells, a separator, one line per row. */
export function markdownTable(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const line = (cells: readonly unknown[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
