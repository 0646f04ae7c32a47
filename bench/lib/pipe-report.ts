// The pipe benchmark's report: the latency, the resolver's share and the
// watch-observed split, pods at once, the resolver's worker time, API calls
// per pipe by client (audit log) and by resource (apiserver_request_total),
// CPU, the services' memory, as a text table and one markdown row.
import { cpus } from "node:os";
import type { CpuUse } from "./cpu.ts";
import type { ServiceFigures } from "./service-stats.ts";
import { calls, ms, round, type Summary, table } from "./stats.ts";

export interface StepFigures {
  perRequest: number;
  meanMs: number;
}

export interface PipeResult {
  params: {
    requests: number;
    concurrency: number;
    warmup: number;
    closedLoop: boolean;
    sleepSeconds: number;
    resolverWorkers: string;
  };
  completed: number;
  failed: number;
  incomplete: number;
  failures: string[];
  spans: Record<string, Summary>;
  podsSeen: number;
  podsAtOnce: number;
  initRunningAtOnce: number;
  resolverSteps: { pending: StepFigures; succeeded: StepFigures; meanQueueWaitMs: number };
  wallSeconds: number;
  throughputPerSecond: number;
  apiCallsByClient: Record<string, Record<string, number>>;
  apiCalls: Record<string, Record<string, number>>;
  cpuSecondsMeasured: CpuUse;
  backgroundCoresBefore: number;
  /** containerd's shims with the runc calls and containers they reaped, in the measured batch (a lower bound) */
  shimCpuSeconds: number;
  controllers: Record<string, ServiceFigures>;
  warnings: Record<string, Record<string, number>>;
  node: { startSeconds: number };
  machine: {
    cpus: number;
    cpuModel: string;
    memGiB: number;
    node: string;
    kubeApiserver: string;
    etcd: string;
  };
}

/** What each span of the split stands for (docs/performance.md, "Pipe resolver"). */
const SPLIT: [string, string, string][] = [
  ["createToPodSeenMs", "create → pod seen", "resolver: pick-up, checks, pod create"],
  ["podSeenToInitStartMs", "pod seen → init started", "node: sandbox, init container start"],
  ["initEndToReadySeenMs", "init ended → ready seen", "node: waiting container start, status"],
  [
    "readySeenToDataSeenMs",
    "ready seen → data seen",
    "resolver: exec tar, outputs, receipt, pod delete, status",
  ],
  ["dataSeenToTrueMs", "data seen → True seen", "lifecycle controller"],
];

const sum = (c: Record<string, number> | undefined) => Object.values(c ?? {}).reduce((a, b) => a + b, 0);

export function pipeReport(r: PipeResult): string {
  const n = r.params.requests;
  const s = (k: string) => r.spans[k]!;
  const perPipe = (c: Record<string, number> | undefined) => round(sum(c) / n, 1);
  const clients = Object.entries(r.apiCallsByClient).sort(([, a], [, b]) => sum(b) - sum(a));
  const all = clients.reduce((a, [, c]) => a + sum(c), 0);
  const cpu = r.cpuSecondsMeasured;
  const steps = r.resolverSteps;
  const rows: [string, string][] = [
    [
      "pipe resolver",
      `${n} pipes, ${r.params.concurrency} clients${r.params.closedLoop ? " (closed loop)" : ""} (warm-up ${r.params.warmup}); init container sleeps ${r.params.sleepSeconds} s; resolver workers ${r.params.resolverWorkers}`,
    ],
    ["  completed", `${r.completed}/${n} (failed ${r.failed}, incomplete ${r.incomplete})`],
    ...r.failures.map((f): [string, string] => ["  failure", f]),
    ["  latency ms (create → True seen)", ms(s("latencyMs"))],
    ["  init container's own run ms", `${ms(s("initRanMs"))}  (its /proc/uptime readings)`],
    ["    by the kubelet's stamps", `${ms(s("initRanStampsMs"))}  (whole seconds)`],
    ["  resolver's share ms", `${ms(s("resolverShareMs"))}  (latency − the init container's own run)`],
    ...SPLIT.map(([k, label, what]): [string, string] => [`    ${label}`, `${ms(s(k))}  ${what}`]),
    [
      "  at once",
      `${r.podsAtOnce} pods, ${r.initRunningAtOnce} init containers running (${r.podsSeen} pods seen)`,
    ],
    [
      "  resolver steps per pipe",
      `pending ${steps.pending.perRequest} (mean ${steps.pending.meanMs} ms), final ${steps.succeeded.perRequest} (mean ${steps.succeeded.meanMs} ms); mean queue wait ${steps.meanQueueWaitMs} ms`,
    ],
    ["  wall time / throughput", `${r.wallSeconds} s, ${r.throughputPerSecond} pipes/s`],
    ["  API calls per pipe (audit)", `${round(all / n, 1)}, by client:`],
    ...clients.map(([client, c]): [string, string] => [
      `    ${client}`,
      `${perPipe(c)}: ${Object.entries(c)
        .map(([k, v]) => `${k} ${round(v / n, 2)}`)
        .join(", ")}`,
    ]),
    ...Object.entries(r.apiCalls).map(([res, c]): [string, string] => [
      `  apiserver_request_total ${res}`,
      calls(c),
    ]),
    [
      "  CPU in measured phase s",
      `${Object.entries(cpu.processes)
        .map(([k, v]) => `${k} ${v}`)
        .join(
          ", ",
        )}, driver ${cpu.benchDriver}; machine ${cpu.machine} of ${round(r.wallSeconds * cpus().length, 1)} available, foreign ${cpu.foreign}`,
    ],
    [
      "    of which the runtime",
      `${r.shimCpuSeconds} s in containerd's shims, with the runc calls and containers they reaped (${round(r.shimCpuSeconds / n, 2)} s per pipe, a lower bound)`,
    ],
    [
      "  machine before the batch",
      `${r.backgroundCoresBefore} cores busy outside this run's processes while it idled${r.backgroundCoresBefore > 0.3 ? ": other work, rerun when quieter" : ""}`,
    ],
    ...Object.entries(r.controllers).map(([name, f]): [string, string] => [
      `  ${name}`,
      `peak RSS (VmHWM) ${f.peakRssMiB} MiB (at ready ${f.rssAtReadyMiB}, at end ${f.rssAtEndMiB}); CPU ${f.cpuSeconds} s total (startup ${f.cpuSecondsStartup} s)`,
    ]),
    [
      "  warnings",
      Object.entries(r.warnings)
        .map(([k, v]) => `${k}: ${calls(v)}`)
        .join("; "),
    ],
    [
      "machine",
      `${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memGiB} GiB, Node ${r.machine.node}; node started in ${r.node.startSeconds} s`,
    ],
    ["control plane", `${r.machine.kubeApiserver}, ${r.machine.etcd}`],
  ];
  const lat = s("latencyMs");
  const share = s("resolverShareMs");
  const by = (client: string) => perPipe(r.apiCallsByClient[client]);
  const markdown = `| ${n} | ${r.params.sleepSeconds} | ${lat.p50} | ${lat.p99} | ${share.p50} | ${share.p99} | ${s("createToPodSeenMs").p50} | ${s("readySeenToDataSeenMs").p50} | ${by("pipe-resolver")} | ${by("kubelet")} | ${round(all / n, 1)} | ${r.podsAtOnce} | ${r.backgroundCoresBefore} |`;
  return `${table(rows)}\n\n${markdown}`;
}
