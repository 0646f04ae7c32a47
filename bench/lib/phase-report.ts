// The report of a benchmark that runs several resolver phases after a
// same-run floor (git-resolver.ts, bundle-resolver.ts): each phase's common
// JSON figures and text rows, the floor's, the services' memory and CPU, the
// markdown table's floor row, and the per-request CSV.
import { cpus } from "node:os";
import type { KubeClient } from "@quarry/kube";
import type { DocumentedFloor } from "./floor.ts";
import type { PhaseResult } from "./phase.ts";
import { deleteRequests, SAMPLES_CSV_HEADER, samplesCsv } from "./requests.ts";
import { sleep } from "./run.ts";
import type { ServiceFigures } from "./service-stats.ts";
import { calls, ms, type Row, round, table, versus } from "./stats.ts";

export interface FloorRun {
  phase: PhaseResult;
  controller: ServiceFigures;
}

/** The flags of a benchmark of resolver phases after the same-run floor: which phases, and the floor or not. */
export const phaseFlags = <const P extends readonly string[]>(phases: P) =>
  ({
    phases: {
      type: "list",
      default: phases.join(","),
      choices: phases,
      help: "a subset of the phases (always run in that order)",
    },
    floor: { type: "boolean", default: true, help: "skip the same-run floor" },
  }) as const;

/** CPU ms per completed request. */
export const perRequest = (seconds: number, p: PhaseResult): number =>
  round((seconds * 1000) / Math.max(1, p.completed), 2);

/** How a phase went: completions, latency (with its split), throughput, the timeline. */
export const outcomeJson = (p: PhaseResult) => ({
  completed: p.completed,
  failed: p.failed,
  incomplete: p.incomplete,
  failures: p.failures,
  latencyMs: p.latencyMs,
  breakdown: p.breakdown,
  wallSeconds: p.wallSeconds,
  throughputPerSecond: p.throughputPerSecond,
  timeline: p.timeline,
});

/** A phase's figures every such benchmark reports, with its latency over the floor (same run and documented). */
export function phaseJson(p: PhaseResult, floor: FloorRun | undefined, documented: DocumentedFloor | Error) {
  return {
    ...outcomeJson(p),
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
    completed: floor.phase.completed,
    latencyMs: floor.phase.latencyMs,
    breakdown: floor.phase.breakdown,
    wallSeconds: floor.phase.wallSeconds,
    throughputPerSecond: floor.phase.throughputPerSecond,
    cpuSecondsMeasured: floor.phase.cpu,
    apiCalls: floor.phase.apiCalls,
    controller: floor.controller,
  };
}

/** Completion and latency (with its split) of a phase of `n` requests; `floor`: the client wrote the data. */
export function latencyRows(p: PhaseResult, n: number, floor = false): Row[] {
  const b = p.breakdown;
  return [
    ["  completed", `${p.completed}/${n} (failed ${p.failed}, incomplete ${p.incomplete})`],
    ...p.failures.map((f): Row => ["  failure", f]),
    ["  latency ms", ms(p.latencyMs)],
    ["    create", ms(b.createMs!)],
    ...((floor
      ? [
          ["    status.data write", ms(b.statusWriteMs!)],
          ["    data written → True", ms(b.dataWrittenToSucceededMs!)],
        ]
      : [
          ["    created → data seen", ms(b.createdToDataSeenMs!)],
          ["    data seen → True", ms(b.dataSeenToSucceededMs!)],
        ]) as Row[]),
  ];
}

type Percentiles = ReturnType<typeof versus>;

/** What the resolver adds over the floor measured in the same run. */
export function sameRunRow(same: { latencyMs: Percentiles; throughputRatio: number } | undefined): Row[] {
  if (!same) return [];
  const l = same.latencyMs;
  return [
    [
      "over the floor, same run",
      `resolver adds ${l.p50} ms at p50 (p90 ${l.p90}, p99 ${l.p99}, max ${l.max}); throughput ×${same.throughputRatio}`,
    ],
  ];
}

/** What the resolver adds over the floor's documented median (another run: a cross-run comparison). */
export function documentedRow(
  doc: { error: string } | { floor: DocumentedFloor; latencyMs: Percentiles; throughputRatio: number },
  n: number,
  concurrency: number,
): Row {
  if ("error" in doc) return ["over the floor, documented", `unavailable: ${doc.error}`];
  const { floor: f, latencyMs: l } = doc;
  const like = n === f.requests && concurrency === f.concurrency;
  return [
    "over the floor, documented",
    `resolver adds ${l.p50} ms at p50 (p90 ${l.p90}, p99 ${l.p99}) over the floor's p50 ${f.p50} ms; throughput ×${doc.throughputRatio} of ${f.throughputPerSecond}/s. Cross-run comparison: ${f.source} (${f.requests} requests, ${f.concurrency} clients)${like ? "" : `, this run ${n} requests, ${concurrency} clients: not like for like`}`,
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

/** A markdown column: its header and each phase's cell. */
export type Column<J> = readonly [header: string, cell: (j: J) => unknown];

/**
 * The report of a floor plus resolver phases: the phases' `rows`, the floor's, the resolver's and the
 * lifecycle controller's memory and CPU, the machine (`machine`), then, for docs/performance.md, a markdown
 * table with one line per phase: the latency, the throughput, the resolver's in-process mean, the latency
 * over the same run's floor, and `columns`.
 */
export function resolverRunReport<J extends PhaseJson>(opts: {
  rows: readonly Row[];
  floor: FloorRun | undefined;
  flags: { requests: number; concurrency: number; warmup: number };
  resolver: string;
  r: { controllers: Record<string, ServiceFigures>; resolverWarnings: Record<string, number> };
  machine: readonly Row[];
  phases: readonly J[];
  columns: readonly Column<J>[];
}): string {
  const { floor, flags, resolver } = opts;
  const n = flags.requests;
  const fp = floor?.phase;
  const rc = opts.r.controllers[resolver];
  const lc = opts.r.controllers["lifecycle-controller"];
  const rows: Row[] = [
    ...opts.rows,
    ...((fp
      ? [
          ["floor (same run)", `${n} requests, ${flags.concurrency} clients (warm-up ${flags.warmup})`],
          ["  completed", `${fp.completed}/${n}`],
          ["  latency ms", ms(fp.latencyMs)],
          ["  wall time / throughput", `${fp.wallSeconds} s, ${fp.throughputPerSecond} requests/s`],
          ["", ""],
        ]
      : []) as Row[]),
    [
      resolver,
      `peak RSS (VmHWM) ${rc?.peakRssMiB} MiB (sampled max ${rc?.sampledMaxRssMiB}, at ready ${rc?.rssAtReadyMiB}, at end ${rc?.rssAtEndMiB}); CPU ${rc?.cpuSeconds} s total (startup ${rc?.cpuSecondsStartup} s)`,
    ],
    ["lifecycle-controller", `peak RSS (VmHWM) ${lc?.peakRssMiB} MiB; CPU ${lc?.cpuSeconds} s total`],
    [`${resolver} warnings`, calls(opts.r.resolverWarnings)],
    ...opts.machine,
  ];
  const columns: Column<J>[] = [
    ["phase", (j) => j.name],
    ["p50 ms", (j) => j.latencyMs.p50],
    ["p90 ms", (j) => j.latencyMs.p90],
    ["p99 ms", (j) => j.latencyMs.p99],
    ["max ms", (j) => j.latencyMs.max],
    ["req/s", (j) => j.throughputPerSecond],
    ["resolver in-process mean ms", (j) => j.resolver.meanMs],
    ["over floor p50 ms", (j) => j.overFloor.sameRun?.latencyMs.p50 ?? ""],
    ...opts.columns,
  ];
  const fl = fp?.latencyMs;
  const floorLine = fl
    ? [["floor", fl.p50, fl.p90, fl.p99, fl.max, fp.throughputPerSecond, ...columns.slice(6).map(() => "")]]
    : [];
  return `${table(rows)}\n\n${markdownTable(
    columns.map(([h]) => h),
    [...floorLine, ...opts.phases.map((j) => columns.map(([, cell]) => cell(j)))],
  )}`;
}

type PhaseJson = ReturnType<typeof phaseJson> & { name: string; resolver: { meanMs?: number } };

/**
 * `ok` and `samples` of a benchmark whose steps are the same-run floor (if asked for) and resolver phases
 * (`phasesOf` picks those): every phase ran and every request in it completed; every measured request's
 * timeline, the floor's first, as CSV.
 */
export function floorThenPhases<S extends { floor?: FloorRun }>(
  phasesOf: (steps: readonly S[]) => readonly { name: string; phase: PhaseResult }[],
) {
  const floorOf = (steps: readonly S[]) => steps.find((s) => s.floor)?.floor;
  return {
    ok(flags: { phases: readonly string[]; requests: number }, steps: readonly S[]): boolean {
      const floor = floorOf(steps);
      const phases = phasesOf(steps);
      const n = flags.requests;
      return (
        phases.length === flags.phases.length &&
        phases.every((r) => r.phase.completed === n) &&
        (!floor || floor.phase.completed === n)
      );
    },
    samples(steps: readonly S[]): string {
      const floor = floorOf(steps);
      const csv = [
        floor ? samplesCsv(floor.phase.batch, "floor") : "",
        ...phasesOf(steps).map((r) => samplesCsv(r.phase.batch, r.name)),
      ];
      return SAMPLES_CSV_HEADER + csv.join("");
    },
  };
}

/** A resolver's own view of a phase from its /metrics, on one line. */
export function resolverRow(rv: {
  meanMs?: number;
  p50Ms?: number;
  p90Ms?: number;
  outcomes?: object;
  cache?: object;
}): Row {
  return [
    "  resolver, in process",
    `picked up → outcome written: mean ${rv.meanMs} ms, p50 ≈ ${rv.p50Ms} ms, p90 ≈ ${rv.p90Ms} ms; outcomes ${JSON.stringify(rv.outcomes)}; SDK cache ${JSON.stringify(rv.cache)}`,
  ];
}

/** Named processes' CPU in a phase, then the driver's, the machine's and `foreign`. */
export function processCpuRow(
  p: PhaseResult,
  named: readonly [string, number | undefined][],
  foreign = p.cpu.foreign,
): Row {
  return [
    "  CPU in measured phase",
    `${named.map(([k, v]) => `${k} ${v} s`).join(", ")}, driver ${p.cpu.benchDriver} s; machine ${p.cpu.machine} s of ${round(p.wallSeconds * cpus().length, 2)} s, foreign ${foreign} s`,
  ];
}

/** Deletes a phase's requests (warm-up and measured) so the next phase's informers start empty. */
export async function deletePhaseRequests(
  admin: KubeClient,
  namespace: string,
  p: PhaseResult,
  warmup: number,
  signal: AbortSignal,
): Promise<void> {
  const warm = Array.from({ length: warmup }, (_, i) => `warm-${String(i).padStart(5, "0")}`);
  await deleteRequests(admin, namespace, [...warm, ...p.batch.samples.map((s) => s.name)], signal);
  await sleep(1000);
}

/** A markdown table: the header's cells, a separator, one line per row. */
export function markdownTable(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const line = (cells: readonly unknown[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
/** A service's memory and CPU on one line; `measured`: its CPU in the measured phase. */
export function serviceRow(label: string, f: ServiceFigures, measured?: number): Row {
  return [
    label,
    `peak RSS (VmHWM) ${f.peakRssMiB} MiB (sampled max ${f.sampledMaxRssMiB}, at ready ${f.rssAtReadyMiB}, at end ${f.rssAtEndMiB}); CPU ${f.cpuSeconds} s total (startup ${f.cpuSecondsStartup} s${measured === undefined ? "" : `, measured ${measured} s`})`,
  ];
}

/** The control plane's, the driver's and the machine's CPU in a phase, and `foreign` (other work: rerun if large). */
export function cpuRow(p: Pick<PhaseResult, "cpu" | "wallSeconds">, label = "  CPU in measured phase"): Row {
  const c = p.cpu;
  return [
    label,
    `kube-apiserver ${c.processes["kube-apiserver"]} s, etcd ${c.processes.etcd} s, bench driver ${c.benchDriver} s; machine ${c.machine} s of ${round(p.wallSeconds * cpus().length, 2)} s available, foreign ${c.foreign} s`,
  ];
}

/** How many requests were created, seen with data and seen True per window: where a backlog builds and drains. */
export function timelineRows(p: PhaseResult): Row[] {
  return [
    [`  per ${p.timeline.windowMs} ms: created`, p.timeline.created.join(" ")],
    ["                 data seen", p.timeline.dataSeen.join(" ")],
    ["                 True seen", p.timeline.done.join(" ")],
  ];
}

export const clientRow = (p: PhaseResult): Row => [
  "  client",
  `${p.client.retries} retries, ${p.client.watchRestarts} watch restarts`,
];
