// The report of a benchmark that runs several resolver phases after a
// same-run floor (git-resolver.ts, bundle-resolver.ts): each phase's common
// JSON figures and text rows, the floor's, the services' memory and CPU, the
// markdown table's floor row, and the per-request CSV.
import { writeFileSync } from "node:fs";
import type { DocumentedFloor } from "./floor.ts";
import type { PhaseResult } from "./phase.ts";
import { calls, ms, versus } from "./report.ts";
import { SAMPLES_CSV_HEADER, samplesCsv } from "./requests.ts";
import { log } from "./run.ts";
import type { ServiceFigures } from "./service-stats.ts";
import { round } from "./stats.ts";

export interface FloorRun {
  phase: PhaseResult;
  controller: ServiceFigures;
}

type Row = [string, string];

/** CPU ms per completed request. */
export const perRequest = (seconds: number, p: PhaseResult): number =>
  round((seconds * 1000) / Math.max(1, p.completed), 2);

/** A phase's figures every such benchmark reports, with its latency over the floor (same run and documented). */
export function phaseJson(p: PhaseResult, floor: FloorRun | undefined, documented: DocumentedFloor | Error) {
  return {
    completed: p.completed,
    failed: p.failed,
    incomplete: p.incomplete,
    failures: p.failures,
    latencyMs: p.latencyMs,
    breakdown: p.breakdown,
    wallSeconds: p.wallSeconds,
    throughputPerSecond: p.throughputPerSecond,
    timeline: p.timeline,
    apiCalls: p.apiCalls,
    logLines: Object.fromEntries(Object.entries(p.services).map(([k, v]) => [k, v.logLines])),
    client: p.client,
    overFloor: {
      sameRun: floor
        ? {
            latencyMs: versus(p.latencyMs, floor.phase.latencyMs),
            throughputRatio: round(p.throughputPerSecond / floor.phase.throughputPerSecond, 2),
          }
        : undefined,
      documented:
        documented instanceof Error
          ? { error: documented.message }
          : {
              latencyMs: versus(p.latencyMs, documented),
              throughputRatio: round(p.throughputPerSecond / documented.throughputPerSecond, 2),
            },
    },
  };
}

export function floorJson(floor: FloorRun | undefined) {
  if (!floor) return undefined;
  return {
    latencyMs: floor.phase.latencyMs,
    breakdown: floor.phase.breakdown,
    wallSeconds: floor.phase.wallSeconds,
    throughputPerSecond: floor.phase.throughputPerSecond,
    cpuSecondsMeasured: floor.phase.cpu,
    apiCalls: floor.phase.apiCalls,
    controller: floor.controller,
  };
}

/** Completion and latency (with its split) of a phase of `n` requests. */
export function latencyRows(p: PhaseResult, n: number): Row[] {
  return [
    ["  completed", `${p.completed}/${n} (failed ${p.failed}, incomplete ${p.incomplete})`],
    ...p.failures.map((f): Row => ["  failure", f]),
    ["  latency ms", ms(p.latencyMs)],
    ["    create", ms(p.breakdown.createMs!)],
    ["    created → data seen", ms(p.breakdown.createdToDataSeenMs!)],
    ["    data seen → True", ms(p.breakdown.dataSeenToSucceededMs!)],
  ];
}

export function apiCallRows(p: PhaseResult): Row[] {
  return Object.entries(p.apiCalls).map(([res, cs]): Row => [`  API calls: ${res}`, calls(cs)]);
}

/** The phase over the same run's floor, if there was one, and a blank separator row. */
export function overFloorRows(j: ReturnType<typeof phaseJson>): Row[] {
  const same = j.overFloor.sameRun;
  return [
    ...(same
      ? [
          [
            "  over the floor (same run)",
            `+${same.latencyMs.p50} ms p50, +${same.latencyMs.p99} ms p99; throughput ×${same.throughputRatio}`,
          ] as Row,
        ]
      : []),
    ["", ""],
  ];
}

export function floorRows(
  floor: FloorRun | undefined,
  n: number,
  concurrency: number,
  warmup: number,
): Row[] {
  if (!floor) return [];
  const f = floor.phase;
  return [
    ["floor (same run)", `${n} requests, ${concurrency} clients (warm-up ${warmup})`],
    ["  completed", `${f.completed}/${n}`],
    ["  latency ms", ms(f.latencyMs)],
    ["  wall time / throughput", `${f.wallSeconds} s, ${f.throughputPerSecond} requests/s`],
    ["", ""],
  ];
}

/** The resolver's and the lifecycle controller's memory and CPU over the run, and the resolver's warnings. */
export function serviceRows(
  resolver: string,
  controllers: Record<string, ServiceFigures>,
  warnings: Record<string, number>,
): Row[] {
  const r = controllers[resolver];
  const lc = controllers["lifecycle-controller"];
  return [
    [
      resolver,
      `peak RSS (VmHWM) ${r?.peakRssMiB} MiB (sampled max ${r?.sampledMaxRssMiB}, at ready ${r?.rssAtReadyMiB}, at end ${r?.rssAtEndMiB}); CPU ${r?.cpuSeconds} s total (startup ${r?.cpuSecondsStartup} s)`,
    ],
    ["lifecycle-controller", `peak RSS (VmHWM) ${lc?.peakRssMiB} MiB; CPU ${lc?.cpuSeconds} s total`],
    [`${resolver} warnings`, calls(warnings)],
  ];
}

/** The markdown table's floor row (empty cells for the phase-only columns), or nothing. */
export function floorMarkdownRow(floor: FloorRun | undefined, columns: number): string[] {
  if (!floor) return [];
  const f = floor.phase.latencyMs;
  const rest = " |".repeat(Math.max(0, columns - 6));
  return [
    `| floor | ${f.p50} | ${f.p90} | ${f.p99} | ${f.max} | ${floor.phase.throughputPerSecond} |${rest}`,
  ];
}

/** Every measured request's timeline, the floor's first, as CSV. */
export function writeSamples(
  file: string,
  floor: FloorRun | undefined,
  phases: readonly { name: string; phase: PhaseResult }[],
): void {
  const csv = [
    floor ? samplesCsv(floor.phase.batch, "floor") : "",
    ...phases.map((r) => samplesCsv(r.phase.batch, r.name)),
  ];
  writeFileSync(file, SAMPLES_CSV_HEADER + csv.join(""));
}

/**
 * Prints the JSON line, writes `--samples` and `--json`, and returns the exit
 * status: 0 only if every expected phase ran and every request (the floor's
 * too) succeeded before the run was stopped.
 */
export function emitResult(
  result: { aborted?: string | undefined },
  opts: {
    json?: string | undefined;
    samples?: string | undefined;
    floor: FloorRun | undefined;
    phases: readonly { name: string; phase: PhaseResult }[];
    expectedPhases: number;
    requests: number;
  },
): number {
  console.log(JSON.stringify(result));
  if (opts.samples) writeSamples(opts.samples, opts.floor, opts.phases);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
  const allDone =
    opts.phases.length === opts.expectedPhases &&
    opts.phases.every((r) => r.phase.completed === opts.requests);
  const floorOk = !opts.floor || opts.floor.phase.completed === opts.requests;
  if (result.aborted) log(`run stopped early: ${result.aborted}`);
  return allDone && floorOk && !result.aborted ? 0 : 1;
}
