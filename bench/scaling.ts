// Benchmark: scaling a resolver out by buckets. The same workload runs against
// 1 replica and then 3 (--replicas), each replica a separate real process with
// its own POD_NAME identity under the resolver's one ServiceAccount and shipped
// RBAC, all with the same bucket count (--buckets, leader election on), as a
// Deployment's pods would. Workloads (--workloads), each configuration in its
// own namespace on one private control plane, with a fresh lifecycle-controller
// and fresh replicas:
//
//   cluster  the cluster resolver's hot path (bench/cluster-hot.ts's workload):
//            --requests requests for one of --tasks Tasks
//   git      cold git requests (bench/git-resolver.ts's `cold` phase): every
//            replica starts with an empty cache of its own (a pod's emptyDir),
//            --git-requests requests, each for a different file of a generated
//            repository on the fixture smart-HTTP git server, at `main`, cache=never
//   git-hot  the same requests for one of --hot-files files, so after the first few
//            each resolution is a ref lookup on the server and a memory hit (like
//            bench/git-resolver.ts's `hot`), with the server answering each HTTP
//            request --git-latency ms late: a remote forge, resolutions that wait
//            on the network rather than on this machine's CPU
//
// --concurrency clients create the requests (open loop unless --closed-loop).
// Reported per configuration: throughput, latency, how the requests spread
// over the replicas (each replica's quarry_resolution_duration_seconds_count,
// against what the buckets it held predict), that none was resolved twice (the
// replicas' succeeded resolutions add up to the requests), bucket moves during
// the phase, and the CPU of every process, to say what bounds the throughput.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startGitServer } from "@quarry/devcluster/git-server";
import type { RunningService } from "@quarry/devcluster/service";
import { heldBuckets, type Replica, startReplica } from "@quarry/harness/replicas";
import { newScenario } from "@quarry/harness/scenario";
import { bucketLeaseName, bucketOf, DEFAULT_LEASE_TIMING, type KubeClient } from "@quarry/kube";
import { type BenchContext, loadFlags, type Phase, runBenchmark } from "./lib/benchmark.ts";
import { reapedChildrenCpuSeconds } from "./lib/git-procs.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import { markdownTable } from "./lib/phase-report.ts";
import { controlPlaneVersions, machineInfo, versionOf } from "./lib/report.ts";
import {
  createWithRetry,
  deleteRequests,
  SAMPLES_CSV_HEADER,
  type Sample,
  samplesCsv,
} from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { log, sleep } from "./lib/run.ts";
import { logWarnings, type ServiceFigures } from "./lib/service-stats.ts";
import { calls, ms, type Row, round, table } from "./lib/stats.ts";
import {
  applyClusterTasks,
  buildGitWorkload,
  clusterRequest,
  configureGitNamespace,
  gitRequest,
  gitServerRequests,
} from "./lib/workloads.ts";

const WORKLOADS = ["cluster", "git", "git-hot"] as const;
type WorkloadName = (typeof WORKLOADS)[number];
const SERVICE: Record<WorkloadName, string> = {
  cluster: "cluster-resolver",
  git: "git-resolver",
  "git-hot": "git-resolver",
};
const isGit = (w: WorkloadName) => w !== "cluster";

const FLAGS = {
  replicas: {
    type: "ints",
    default: "1,3",
    min: 1,
    help: "replica counts, measured in this order (1,3,3,1 shows order effects)",
  },
  buckets: { type: "int", default: 6, min: 1, help: "QUARRY_BUCKETS of every configuration" },
  workloads: {
    type: "list",
    default: WORKLOADS.join(","),
    choices: WORKLOADS,
    help: "a subset of the workloads, always in that order",
  },
  ...loadFlags(1000, "measured requests of the cluster workload per configuration"),
  "git-requests": {
    type: "int",
    default: 300,
    min: 1,
    help: "measured requests of the git workloads per configuration (and Task files in the repository)",
  },
  "hot-files": { type: "int", default: 10, min: 1, help: "files the git-hot requests read" },
  "git-latency": {
    type: "int",
    default: 1000,
    min: 0,
    arg: "MS",
    help: "the git server's added latency per HTTP response in git-hot",
  },
  "closed-loop": { type: "boolean", help: "each client waits for its request to finish before the next" },
  tasks: { type: "int", default: 50, min: 1, help: "the cluster workload's Tasks" },
  "bulk-mb": { type: "int", default: 32, min: 0, help: "the git repository's other content" },
  "lifecycle-timeout": {
    type: "string",
    default: "10m",
    arg: "D",
    help: "the git namespaces' default-maximum-resolution-timeout",
  },
  "spread-timeout": {
    type: "int",
    default: 90,
    min: 1,
    arg: "S",
    help: "longest wait for an even spread (then it measures anyway and says so)",
  },
} as const;

interface ReplicaFigures {
  name: string;
  /** bucket Leases it held when the measured batch started and when it ended */
  bucketsBefore: string[];
  bucketsAfter: string[];
  /** measured requests whose bucket it held at the start */
  expected: number;
  /** resolution steps in the measured batch, by outcome (its quarry_resolution_duration_seconds_count) */
  outcomes: Record<string, number>;
  resolved: number;
  bucketChanges: number;
  inProcessMeanMs: number;
  cpuSeconds: number;
  /** CPU of the git processes it ran and reaped (git workloads) */
  gitCpuSeconds?: number;
  /** its git engine's operations in the batch (quarry_git_operations_total: fetch, blob, memory_hit) */
  gitOps?: Record<string, number>;
  process: ServiceFigures;
  warnings: Record<string, number>;
}

interface Configuration {
  workload: WorkloadName;
  replicas: number;
  namespace: string;
  requests: number;
  spreadSeconds: number;
  /** the machine's 1-minute load average when the measured batch started */
  loadAtStart: number;
  phase: PhaseResult;
  perReplica: ReplicaFigures[];
  lifecycle: ServiceFigures;
  /** Σ succeeded resolutions − completed requests: > 0 means some request was resolved more than once */
  resolvedTwice: number;
  bucketsMoved: boolean;
  gitServer?: { requests: number; byKind: Record<string, number>; cpuSeconds: number };
  cpu: {
    /** every process's CPU, seconds, in the measured batch */
    seconds: Record<string, number>;
    /** each process's CPU ÷ wall time: 1.0 is one core busy the whole time */
    coresUsed: Record<string, number>;
    machineBusyFraction: number;
    foreignNet: number;
    msPerRequest: number;
  };
}

/** Waits until every bucket is held and the replicas' shares differ by at most one; returns each one's buckets. */
async function waitForSpread(
  replicas: readonly Replica[],
  signal: AbortSignal,
  BUCKETS: number,
  SPREAD_TIMEOUT_S: number,
): Promise<string[][]> {
  const deadline = performance.now() + SPREAD_TIMEOUT_S * 1000;
  let held: string[][] = [];
  while (!signal.aborted) {
    held = await Promise.all(replicas.map((r) => heldBuckets(r).catch(() => [] as string[])));
    const all = held.flat();
    const counts = held.map((h) => h.length);
    if (
      all.length === BUCKETS &&
      new Set(all).size === BUCKETS &&
      Math.max(...counts) - Math.min(...counts) <= 1
    )
      return held;
    if (performance.now() > deadline) {
      log(`buckets not spread evenly after ${SPREAD_TIMEOUT_S} s: ${counts.join("+")}; measuring anyway`);
      return held;
    }
    await sleep(250);
  }
  return held;
}

interface Setup {
  versions: ReturnType<typeof controlPlaneVersions> & { git: string };
  server: Awaited<ReturnType<typeof startGitServer>> | undefined;
  workload: Awaited<ReturnType<typeof buildGitWorkload>> | undefined;
  plane: Awaited<ReturnType<BenchContext<typeof FLAGS>["controlPlane"]>>;
  clientStats: { retries: number };
}

/** One workload against `n` replicas, in a namespace of its own, with a fresh lifecycle-controller and replicas. */
async function configuration(
  ctx: BenchContext<typeof FLAGS>,
  s: Setup,
  w: WorkloadName,
  n: number,
): Promise<Configuration> {
  const f = ctx.flags;
  const { server, workload, clientStats } = s;
  const { cp: plane, pids: cpPids, info, admin } = s.plane;
  const [BUCKETS, TASKS, HOT_FILES, GIT_LATENCY_MS] = [f.buckets, f.tasks, f["hot-files"], f["git-latency"]];
  const [LOG_LEVEL, CONCURRENCY, WARMUP, CLOSED_LOOP] = [
    f["log-level"],
    f.concurrency,
    f.warmup,
    f["closed-loop"],
  ];
  const service = SERVICE[w];
  const N = w === "cluster" ? f.requests : f["git-requests"];
  log(`${w}: ${n} replica(s) of ${service}, ${BUCKETS} buckets`);
  const scn = await newScenario(`bench-scale-${w}-r${n}`, { cp: info });
  if (w === "cluster") await applyClusterTasks(admin, scn.namespace, TASKS);
  else await configureGitNamespace(scn, server!, f["lifecycle-timeout"]);
  server?.setLatency(w === "git-hot" ? GIT_LATENCY_MS : 0);
  const lc = await ctx.services.start(scn, "lifecycle-controller");

  // ---- the replicas, started together as a Deployment's pods are ----
  await scn.identity(service);
  const spreadStart = performance.now();
  const replicas = await Promise.all(
    Array.from({ length: n }, (_, k) => {
      const env: Record<string, string> = { LOG_LEVEL, QUARRY_BUCKETS: String(BUCKETS) };
      if (isGit(w)) {
        const dir = mkdtempSync(join(tmpdir(), `quarry-bench-scale-cache-r${k + 1}-`));
        ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
        env.QUARRY_GIT_CACHE_DIR = dir;
      }
      return startReplica(scn, service, `r${k + 1}`, env);
    }),
  );
  const stats = replicas.map((r) => ctx.services.adopt(r.svc));
  const before = await waitForSpread(replicas, ctx.signal, BUCKETS, f["spread-timeout"]);
  const spreadSeconds = round((performance.now() - spreadStart) / 1000, 1);
  log(
    `${w}: ${n} replica(s) ready, buckets ${before.map((b) => b.length).join("+")} after ${spreadSeconds} s`,
  );
  // each replica under its own name in the phase's CPU, logs and /metrics
  const named: RunningService[] = replicas.map((r) => ({ ...r.svc, name: `${service}/${r.name}` }));

  // the git processes' CPU is read from the first measured create on (the warm-up is over)
  let window: { git: number[]; server: number; serverLog: number; load: number } | undefined;
  const openWindow = () => {
    window ??= {
      load: loadavg()[0]!,
      git: replicas.map((r) => reapedChildrenCpuSeconds(r.svc.pid)),
      server: reapedChildrenCpuSeconds(process.pid),
      serverLog: server?.log.length ?? 0,
    };
  };
  const send = async (client: KubeClient, name: string, i: number, s: Sample) => {
    const warm = name.startsWith("warm-");
    if (!warm) openWindow();
    const rr =
      w === "cluster"
        ? clusterRequest(scn.namespace, name, i, TASKS)
        : w === "git"
          ? gitRequest(workload!, scn.namespace, name, i, { warm })
          : // git-hot: warm-ups read the measured files too (each replica fetches them once)
            gitRequest(workload!, scn.namespace, name, i % HOT_FILES);
    await createWithRetry(client, rr, clientStats, ctx.signal);
    s.created = performance.now();
  };
  const phase = await runPhase({
    name: `${w}-r${n}`,
    cp: plane,
    namespace: scn.namespace,
    services: [lc.svc, ...named],
    pids: cpPids,
    concurrency: CONCURRENCY,
    warmup: WARMUP,
    requests: N,
    signal: ctx.signal,
    send,
    closedLoop: CLOSED_LOOP,
    resources: ["resolutionrequests", "leases"],
  });
  openWindow();
  const gitCpu = replicas.map((r, k) => reapedChildrenCpuSeconds(r.svc.pid) - window!.git[k]!);
  const serverCpu = reapedChildrenCpuSeconds(process.pid) - window!.server;
  const after = await Promise.all(replicas.map((r) => heldBuckets(r).catch(() => [] as string[])));

  // ---- who resolved what ----
  const owner = new Map<string, string>();
  for (const [k, held] of before.entries()) for (const b of held) owner.set(b, replicas[k]!.name);
  const expected = new Map<string, number>();
  for (const s of phase.batch.samples) {
    const lease = bucketLeaseName(service, bucketOf(`${scn.namespace}/${s.name}`, BUCKETS), BUCKETS);
    const o = owner.get(lease) ?? "(nobody)";
    expected.set(o, (expected.get(o) ?? 0) + 1);
  }
  const perReplica: ReplicaFigures[] = [];
  for (const [k, r] of replicas.entries()) {
    const svcName = named[k]!.name;
    const view = resolverView(phase, svcName, isGit(w) ? "git" : "cluster");
    perReplica.push({
      name: r.name,
      bucketsBefore: before[k] ?? [],
      bucketsAfter: after[k] ?? [],
      expected: expected.get(r.name) ?? 0,
      outcomes: view?.outcomes ?? {},
      resolved: view?.outcomes.succeeded ?? 0,
      bucketChanges: metricDelta(phase, svcName, "quarry_bucket_changes_total"),
      inProcessMeanMs: view?.meanMs ?? Number.NaN,
      cpuSeconds: phase.cpu.processes[svcName] ?? Number.NaN,
      ...(isGit(w)
        ? {
            gitCpuSeconds: round(gitCpu[k]!, 2),
            gitOps: Object.fromEntries(
              ["fetch", "blob", "memory_hit"].map((op) => [
                op,
                metricDelta(phase, svcName, "quarry_git_operations_total", { operation: op }),
              ]),
            ),
          }
        : {}),
      process: await stats[k]!.final(),
      warnings: logWarnings(r.svc),
    });
  }
  const lifecycle = await lc.stats.final();
  const resolvedSum = perReplica.reduce((a, r) => a + r.resolved, 0);
  const bucketsMoved =
    perReplica.some((r) => r.bucketChanges > 0) ||
    perReplica.some((r) => [...r.bucketsBefore].sort().join() !== [...r.bucketsAfter].sort().join());

  // ---- CPU: what bounds the throughput ----
  const seconds: Record<string, number> = {
    ...phase.cpu.processes,
    "bench driver": phase.cpu.benchDriver,
  };
  const gitCpuTotal = gitCpu.reduce((a, b) => a + b, 0);
  if (isGit(w)) {
    seconds["resolvers' git processes"] = round(gitCpuTotal, 2);
    seconds["git server (git http-backend)"] = round(serverCpu, 2);
  }
  const wall = Math.max(phase.wallSeconds, 1e-3);
  const coresUsed = Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, round(v / wall, 2)]));
  const allCpu = Object.values(seconds).reduce((a, b) => a + b, 0);
  const measured = server ? server.log.slice(window!.serverLog) : [];
  const configuration: Configuration = {
    workload: w,
    replicas: n,
    namespace: scn.namespace,
    requests: N,
    spreadSeconds,
    loadAtStart: round(window!.load, 2),
    phase,
    perReplica,
    lifecycle,
    resolvedTwice: resolvedSum - phase.completed,
    bucketsMoved,
    ...(isGit(w)
      ? {
          gitServer: {
            requests: measured.length,
            byKind: gitServerRequests(measured),
            cpuSeconds: round(serverCpu, 2),
          },
        }
      : {}),
    cpu: {
      seconds,
      coresUsed,
      machineBusyFraction: round(phase.cpu.machine / (wall * cpus().length), 2),
      foreignNet: round(phase.cpu.foreign - (isGit(w) ? gitCpuTotal + serverCpu : 0), 2),
      msPerRequest: round((allCpu * 1000) / Math.max(1, phase.completed), 1),
    },
  };
  log(
    `${w} × ${n}: ${phase.throughputPerSecond} requests/s, p50 ${phase.latencyMs.p50} ms, p99 ${phase.latencyMs.p99} ms (${phase.completed}/${N}); resolved ${perReplica.map((r) => r.resolved).join("+")}`,
  );

  // ---- the next configuration starts from the same apiserver state ----
  await ctx.services.stop([lc.svc, ...replicas.map((r) => r.svc)]);
  await deleteRequests(
    admin,
    scn.namespace,
    [
      ...Array.from({ length: WARMUP }, (_, i) => `warm-${String(i).padStart(5, "0")}`),
      ...phase.batch.samples.map((s) => s.name),
    ],
    ctx.signal,
  );
  await sleep(1000);
  return configuration;
}

await runBenchmark({
  name: "scaling",
  about:
    "1 against 3 replicas of a resolver, by buckets: the same workload, who resolved what, what bounds the throughput.",
  deadline: 1800,
  flags: FLAGS,
  notes: `The services inherit this process's environment: QUARRY_CONCURRENCY (workers per replica, default 8),
QUARRY_LEASE_DURATION / _RENEW_DEADLINE / _RETRY_PERIOD (default 15s/10s/2s).`,

  async setup(ctx): Promise<Setup> {
    const f = ctx.flags;
    const versions = { ...controlPlaneVersions(), git: versionOf("git", ["--version"]) };
    let server: Setup["server"];
    let workload: Setup["workload"];
    if (f.workloads.some((w) => isGit(w as WorkloadName))) {
      const git = await startGitServer();
      ctx.defer(() => git.stop());
      server = git;
      workload = await buildGitWorkload(git, { files: f["git-requests"], bulkMb: f["bulk-mb"] });
    }
    return {
      versions,
      server,
      workload,
      plane: await ctx.controlPlane({ tekton: true }),
      clientStats: { retries: 0 },
    };
  },

  phases: (ctx, s) =>
    ctx.flags.workloads.flatMap((w) =>
      ctx.flags.replicas.map(
        (n): Phase<Configuration> => ({
          name: `${w}-r${n}`,
          run: () => configuration(ctx, s, w as WorkloadName, n),
          stop: (c) => c.phase.completed < c.requests,
        }),
      ),
    ),

  result(ctx, { versions }, configurations) {
    const f = ctx.flags;
    const leaseTiming = {
      duration: process.env.QUARRY_LEASE_DURATION ?? `${DEFAULT_LEASE_TIMING.leaseDurationMs / 1000}s`,
      renewDeadline:
        process.env.QUARRY_LEASE_RENEW_DEADLINE ?? `${DEFAULT_LEASE_TIMING.renewDeadlineMs / 1000}s`,
      retryPeriod: process.env.QUARRY_LEASE_RETRY_PERIOD ?? `${DEFAULT_LEASE_TIMING.retryPeriodMs / 1000}s`,
    };
    return {
      benchmark: "scaling",
      date: new Date().toISOString(),
      params: {
        replicas: f.replicas,
        buckets: f.buckets,
        workloads: f.workloads,
        requests: { cluster: f.requests, git: f["git-requests"], "git-hot": f["git-requests"] },
        concurrency: f.concurrency,
        warmup: f.warmup,
        closedLoop: f["closed-loop"],
        tasks: f.tasks,
        bulkMb: f["bulk-mb"],
        hotFiles: f["hot-files"],
        gitLatencyMs: f["git-latency"],
        lease: leaseTiming,
        workersPerReplica: process.env.QUARRY_CONCURRENCY ?? "8 (default)",
        logLevel: f["log-level"],
      },
      configurations: configurations.map((c) => ({
        workload: c.workload,
        replicas: c.replicas,
        requests: c.requests,
        completed: c.phase.completed,
        failed: c.phase.failed,
        failures: c.phase.failures,
        wallSeconds: c.phase.wallSeconds,
        throughputPerSecond: c.phase.throughputPerSecond,
        latencyMs: c.phase.latencyMs,
        breakdown: c.phase.breakdown,
        timeline: c.phase.timeline,
        spreadSeconds: c.spreadSeconds,
        loadAtStart: c.loadAtStart,
        resolvedTwice: c.resolvedTwice,
        bucketsMoved: c.bucketsMoved,
        perReplica: c.perReplica,
        lifecycle: c.lifecycle,
        gitServer: c.gitServer,
        cpu: c.cpu,
        apiCalls: c.phase.apiCalls,
        client: c.phase.client,
      })),
      machine: machineInfo(versions),
      loadAverage: loadavg().map((l) => round(l, 2)),
    };
  },

  report(result, ctx, { versions }, configurations) {
    const f = ctx.flags;
    const leaseTiming = result.params.lease;
    const rows: Row[] = [];
    for (const c of configurations) {
      const p = c.phase;
      rows.push(
        [
          `${c.workload} × ${c.replicas}`,
          `${c.requests} requests, ${f.concurrency} clients${f["closed-loop"] ? " (closed loop)" : ""}, ${f.buckets} buckets; spread ${c.perReplica.map((r) => r.bucketsBefore.length).join("+")} after ${c.spreadSeconds} s`,
        ],
        ["  completed", `${p.completed}/${c.requests} (failed ${p.failed}, incomplete ${p.incomplete})`],
        ...p.failures.map((f): Row => ["  failure", f]),
        ["  latency ms", ms(p.latencyMs)],
        ["    created → data seen", ms(p.breakdown.createdToDataSeenMs!)],
        ["  wall time / throughput", `${p.wallSeconds} s, ${p.throughputPerSecond} requests/s`],
        [
          "  resolved per replica",
          `${c.perReplica.map((r) => `${r.name} ${r.resolved} (buckets predict ${r.expected})`).join(", ")}; Σ − requests = ${c.resolvedTwice}${c.bucketsMoved ? "; BUCKETS MOVED during the phase" : ""}`,
        ],
        [
          "  other steps",
          c.perReplica
            .map(
              (r) =>
                `${r.name} ${calls(Object.fromEntries(Object.entries(r.outcomes).filter(([k]) => k !== "succeeded")))}`,
            )
            .join(", "),
        ],
        ["  in process, mean ms", c.perReplica.map((r) => `${r.name} ${r.inProcessMeanMs}`).join(", ")],
        [
          "  CPU s (cores used)",
          Object.entries(c.cpu.seconds)
            .map(([k, v]) => `${k} ${v} (${c.cpu.coresUsed[k]})`)
            .join(", "),
        ],
        [
          "  machine",
          `${round(c.cpu.machineBusyFraction * 100, 0)} % of ${cpus().length} cores busy; load average ${c.loadAtStart} at the start; foreign ${c.cpu.foreignNet} s; ${c.cpu.msPerRequest} ms CPU per request, all processes`,
        ],
        ...(c.gitServer
          ? [
              [
                "  git server",
                `${c.gitServer.requests} HTTP requests (${round(c.gitServer.requests / Math.max(1, p.completed), 2)}/request): ${calls(c.gitServer.byKind)}${c.workload === "git-hot" ? `; each answered ${f["git-latency"]} ms late` : ""}`,
              ] as Row,
              [
                "  git engines",
                c.perReplica.map((r) => `${r.name} ${calls(r.gitOps ?? {})}`).join("; "),
              ] as Row,
            ]
          : []),
        [
          "  memory, peak RSS MiB",
          `${c.perReplica.map((r) => `${r.name} ${r.process.peakRssMiB}`).join(", ")}; lifecycle ${c.lifecycle.peakRssMiB}`,
        ],
        ...Object.entries(p.apiCalls).map(([r, cs]): Row => [`  API calls: ${r}`, calls(cs)]),
        ...c.perReplica
          .filter((r) => Object.keys(r.warnings).length)
          .map((r): Row => [`  ${r.name} warnings`, calls(r.warnings)]),
        ["", ""],
      );
    }
    rows.push(
      [
        "machine",
        `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}, ${versions.git}; load average at the end ${result.loadAverage.join(" ")}`,
      ],
      ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
      ["leases", `${leaseTiming.duration} / ${leaseTiming.renewDeadline} / ${leaseTiming.retryPeriod}`],
    );
    const markdown = configurations.map((c) => {
      const u = c.cpu.coresUsed;
      const resolvers = c.perReplica.reduce((a, r) => a + (u[`${SERVICE[c.workload]}/${r.name}`] ?? 0), 0);
      const named = resolvers + (u["kube-apiserver"] ?? 0) + (u.etcd ?? 0) + (u["lifecycle-controller"] ?? 0);
      const other = Object.values(u).reduce((a, b) => a + b, 0) - named;
      const l = c.phase.latencyMs;
      return [
        c.workload,
        c.replicas,
        c.phase.throughputPerSecond,
        l.p50,
        l.p99,
        c.perReplica.map((r) => `${r.resolved} (${r.expected})`).join(" / "),
        c.resolvedTwice,
        `${round(c.cpu.machineBusyFraction * 100, 0)} %`,
        `${round(resolvers, 2)} / ${u["kube-apiserver"]} / ${u.etcd} / ${u["lifecycle-controller"]} / ${round(other, 2)}`,
      ];
    });
    return `${table(rows)}\n\n${markdownTable(
      [
        "workload",
        "replicas",
        "req/s",
        "p50 ms",
        "p99 ms",
        "resolved per replica (buckets predict)",
        "Σ − requests",
        "machine busy",
        "cores used: resolvers / apiserver / etcd / lifecycle / other",
      ],
      markdown,
    )}`;
  },

  ok: (_r, ctx, _s, configurations) =>
    configurations.length === ctx.flags.workloads.length * ctx.flags.replicas.length &&
    configurations.every((c) => c.phase.completed === c.requests && c.resolvedTwice === 0),
  samples: (_s, configurations) =>
    SAMPLES_CSV_HEADER +
    configurations.map((c) => samplesCsv(c.phase.batch, `${c.workload}-r${c.replicas}`)).join(""),
});
