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
//
//   node bench/scaling.ts [--replicas 1,3] [--buckets 6] [--workloads cluster,git] [--json out.json]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { buildBinaries, type ControlPlane } from "@quarry/devcluster/controlplane";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import type { RunningService } from "@quarry/devcluster/service";
import { bucketLeaseName, bucketOf, DEFAULT_LEASE_TIMING, errorMessage, type KubeClient } from "@quarry/kube";
import { heldBuckets, type Replica, startReplica } from "../e2e/harness/replicas.ts";
import { newScenario } from "../e2e/harness/scenario.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { loadOptions, loadSizes, selectPhases } from "./lib/flags.ts";
import { reapedChildrenCpuSeconds } from "./lib/git-procs.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import { calls, machineInfo, ms, versionOf } from "./lib/report.ts";
import {
  createWithRetry,
  deleteRequests,
  SAMPLES_CSV_HEADER,
  type Sample,
  samplesCsv,
} from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { BoundedRun, intFlag, log, sleep } from "./lib/run.ts";
import { BenchServices, logWarnings, type ServiceFigures } from "./lib/service-stats.ts";
import { round, table } from "./lib/stats.ts";
import {
  applyClusterTasks,
  buildGitWorkload,
  clusterRequest,
  configureGitNamespace,
  type GitWorkload,
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

const USAGE = `usage: node bench/scaling.ts [options]
  --replicas LIST       replica counts to measure, in this order (default 1,3; e.g. 1,3,3,1 to see order effects)
  --buckets N           QUARRY_BUCKETS of every configuration (default 6)
  --workloads LIST      a subset of ${WORKLOADS.join(",")} (default all, in that order)
  --requests N          measured requests of the cluster workload per configuration (default 1000)
  --git-requests N      measured requests of the git and git-hot workloads per configuration (default 300)
  --hot-files N         files the git-hot requests read, request i file i mod N (default 10)
  --git-latency MS      the git server's added latency per HTTP response in git-hot (default 1000)
  --concurrency N       in-flight clients creating requests (default 16)
  --warmup N            warm-up requests per configuration (default 20; git: against a one-file repository)
  --closed-loop         each client waits for its request to finish before the next
  --tasks N             Tasks of the cluster workload (default 50)
  --bulk-mb N           other content in the git repository's tree (default 32)
  --lifecycle-timeout D the git namespaces' default-maximum-resolution-timeout (default 10m)
  --spread-timeout S    longest wait for the buckets to spread evenly over the replicas (default 90)
  --deadline S          the whole run stops after S seconds, torn down either way (default 1800)
  --log-level L         the services' LOG_LEVEL (default info)
  --json FILE           also write the JSON result to FILE
  --samples FILE        every measured request's timeline as CSV
The services inherit this process's environment: QUARRY_CONCURRENCY (workers per replica, default 8),
QUARRY_LEASE_DURATION / _RENEW_DEADLINE / _RETRY_PERIOD (default 15s/10s/2s).`;

const { values: flags } = parseArgs({
  options: {
    ...loadOptions({ requests: "1000", deadline: "1800" }),
    replicas: { type: "string", default: "1,3" },
    buckets: { type: "string", default: "6" },
    workloads: { type: "string", default: WORKLOADS.join(",") },
    "git-requests": { type: "string", default: "300" },
    "hot-files": { type: "string", default: "10" },
    "git-latency": { type: "string", default: "1000" },
    "closed-loop": { type: "boolean", default: false },
    tasks: { type: "string", default: "50" },
    "bulk-mb": { type: "string", default: "32" },
    "lifecycle-timeout": { type: "string", default: "10m" },
    "spread-timeout": { type: "string", default: "90" },
  },
});
const sizes = loadSizes(flags, USAGE);
const CONCURRENCY = sizes.concurrency;
const WARMUP = sizes.warmup;
const BUCKETS = intFlag("buckets", flags.buckets, 1, USAGE);
const REPLICAS = flags.replicas.split(",").map((r) => intFlag("replicas", r.trim(), 1, USAGE));
const GIT_REQUESTS = intFlag("git-requests", flags["git-requests"], 1, USAGE);
const REQUESTS: Record<WorkloadName, number> = {
  cluster: sizes.requests,
  git: GIT_REQUESTS,
  "git-hot": GIT_REQUESTS,
};
const HOT_FILES = intFlag("hot-files", flags["hot-files"], 1, USAGE);
const GIT_LATENCY_MS = intFlag("git-latency", flags["git-latency"], 0, USAGE);
const TASKS = intFlag("tasks", flags.tasks, 1, USAGE);
const BULK_MB = intFlag("bulk-mb", flags["bulk-mb"], 0, USAGE);
const SPREAD_TIMEOUT_S = intFlag("spread-timeout", flags["spread-timeout"], 1, USAGE);
const CLOSED_LOOP = flags["closed-loop"];
const LOG_LEVEL = flags["log-level"];
const workloadNames = selectPhases(flags.workloads, WORKLOADS, USAGE);

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
async function waitForSpread(replicas: readonly Replica[], signal: AbortSignal): Promise<string[][]> {
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

// ---- the run ----

const run = new BoundedRun(sizes.deadlineSeconds);
const runStart = performance.now();
let cp: ControlPlane | undefined;
let server: GitServer | undefined;
const services = new BenchServices(run, LOG_LEVEL);
const cacheDirs: string[] = [];
let exitCode = 1;

try {
  const binDir = buildBinaries();
  const versions = {
    node: process.version,
    git: versionOf("git", ["--version"]),
    kubeApiserver: versionOf(join(binDir, "kube-apiserver"), ["--version"]),
    etcd: versionOf(join(binDir, "etcd"), ["--version"]),
  };
  let workload: GitWorkload | undefined;
  if (workloadNames.some(isGit)) {
    server = await startGitServer();
    workload = await buildGitWorkload(server, { files: REQUESTS.git, bulkMb: BULK_MB });
  }
  const {
    cp: plane,
    pids: cpPids,
    info,
    admin,
  } = await startBenchControlPlane(
    run,
    (started) => {
      cp = started;
    },
    { tekton: true },
  );
  const clientStats = { retries: 0 };
  const configurations: Configuration[] = [];

  for (const w of workloadNames) {
    for (const n of REPLICAS) {
      if (run.signal.aborted) break;
      const service = SERVICE[w];
      const N = REQUESTS[w];
      log(`${w}: ${n} replica(s) of ${service}, ${BUCKETS} buckets`);
      const scn = await newScenario(`bench-scale-${w}-r${n}`, { cp: info });
      if (w === "cluster") await applyClusterTasks(admin, scn.namespace, TASKS);
      else await configureGitNamespace(scn, server!, flags["lifecycle-timeout"]);
      server?.setLatency(w === "git-hot" ? GIT_LATENCY_MS : 0);
      const lc = await services.start(scn, "lifecycle-controller");

      // ---- the replicas, started together as a Deployment's pods are ----
      await scn.identity(service);
      const spreadStart = performance.now();
      const replicas = await Promise.all(
        Array.from({ length: n }, (_, k) => {
          const env: Record<string, string> = { LOG_LEVEL, QUARRY_BUCKETS: String(BUCKETS) };
          if (isGit(w)) {
            const dir = mkdtempSync(join(tmpdir(), `quarry-bench-scale-cache-r${k + 1}-`));
            cacheDirs.push(dir);
            env.QUARRY_GIT_CACHE_DIR = dir;
          }
          return startReplica(scn, service, `r${k + 1}`, env);
        }),
      );
      const stats = replicas.map((r) => services.adopt(r.svc));
      const before = await waitForSpread(replicas, run.signal);
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
        await createWithRetry(client, rr, clientStats, run.signal);
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
        signal: run.signal,
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
      configurations.push({
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
      });
      log(
        `${w} × ${n}: ${phase.throughputPerSecond} requests/s, p50 ${phase.latencyMs.p50} ms, p99 ${phase.latencyMs.p99} ms (${phase.completed}/${N}); resolved ${perReplica.map((r) => r.resolved).join("+")}`,
      );

      // ---- the next configuration starts from the same apiserver state ----
      await services.stop([lc.svc, ...replicas.map((r) => r.svc)]);
      await deleteRequests(
        admin,
        scn.namespace,
        [
          ...Array.from({ length: WARMUP }, (_, i) => `warm-${String(i).padStart(5, "0")}`),
          ...phase.batch.samples.map((s) => s.name),
        ],
        run.signal,
      );
      await sleep(1000);
      if (phase.completed < N) break;
    }
  }
  run.finish();

  // ---- report ----
  const leaseTiming = {
    duration: process.env.QUARRY_LEASE_DURATION ?? `${DEFAULT_LEASE_TIMING.leaseDurationMs / 1000}s`,
    renewDeadline:
      process.env.QUARRY_LEASE_RENEW_DEADLINE ?? `${DEFAULT_LEASE_TIMING.renewDeadlineMs / 1000}s`,
    retryPeriod: process.env.QUARRY_LEASE_RETRY_PERIOD ?? `${DEFAULT_LEASE_TIMING.retryPeriodMs / 1000}s`,
  };
  const result = {
    benchmark: "scaling",
    date: new Date().toISOString(),
    params: {
      replicas: REPLICAS,
      buckets: BUCKETS,
      workloads: workloadNames,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      closedLoop: CLOSED_LOOP,
      tasks: TASKS,
      bulkMb: BULK_MB,
      hotFiles: HOT_FILES,
      gitLatencyMs: GIT_LATENCY_MS,
      lease: leaseTiming,
      workersPerReplica: process.env.QUARRY_CONCURRENCY ?? "8 (default)",
      logLevel: LOG_LEVEL,
    },
    aborted: run.signal.aborted ? errorMessage(run.signal.reason) : undefined,
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

  const rows: [string, string][] = [];
  for (const c of configurations) {
    const p = c.phase;
    rows.push(
      [
        `${c.workload} × ${c.replicas}`,
        `${c.requests} requests, ${CONCURRENCY} clients${CLOSED_LOOP ? " (closed loop)" : ""}, ${BUCKETS} buckets; spread ${c.perReplica.map((r) => r.bucketsBefore.length).join("+")} after ${c.spreadSeconds} s`,
      ],
      ["  completed", `${p.completed}/${c.requests} (failed ${p.failed}, incomplete ${p.incomplete})`],
      ...p.failures.map((f): [string, string] => ["  failure", f]),
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
              `${c.gitServer.requests} HTTP requests (${round(c.gitServer.requests / Math.max(1, p.completed), 2)}/request): ${calls(c.gitServer.byKind)}${c.workload === "git-hot" ? `; each answered ${GIT_LATENCY_MS} ms late` : ""}`,
            ] as [string, string],
            ["  git engines", c.perReplica.map((r) => `${r.name} ${calls(r.gitOps ?? {})}`).join("; ")] as [
              string,
              string,
            ],
          ]
        : []),
      [
        "  memory, peak RSS MiB",
        `${c.perReplica.map((r) => `${r.name} ${r.process.peakRssMiB}`).join(", ")}; lifecycle ${c.lifecycle.peakRssMiB}`,
      ],
      ...Object.entries(p.apiCalls).map(([r, cs]): [string, string] => [`  API calls: ${r}`, calls(cs)]),
      ...c.perReplica
        .filter((r) => Object.keys(r.warnings).length)
        .map((r): [string, string] => [`  ${r.name} warnings`, calls(r.warnings)]),
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
  console.log(`\n${table(rows)}\n`);
  console.log(
    "| workload | replicas | req/s | p50 ms | p99 ms | resolved per replica (buckets predict) | Σ − requests | machine busy | cores used: resolvers / apiserver / etcd / lifecycle / other |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const c of configurations) {
    const u = c.cpu.coresUsed;
    const resolvers = c.perReplica.reduce((a, r) => a + (u[`${SERVICE[c.workload]}/${r.name}`] ?? 0), 0);
    const named = resolvers + (u["kube-apiserver"] ?? 0) + (u.etcd ?? 0) + (u["lifecycle-controller"] ?? 0);
    const other = Object.values(u).reduce((a, b) => a + b, 0) - named;
    console.log(
      `| ${c.workload} | ${c.replicas} | ${c.phase.throughputPerSecond} | ${c.phase.latencyMs.p50} | ${c.phase.latencyMs.p99} | ${c.perReplica.map((r) => `${r.resolved} (${r.expected})`).join(" / ")} | ${c.resolvedTwice} | ${round(c.cpu.machineBusyFraction * 100, 0)} % | ${round(resolvers, 2)} / ${u["kube-apiserver"]} / ${u.etcd} / ${u["lifecycle-controller"]} / ${round(other, 2)} |`,
    );
  }
  console.log(JSON.stringify(result));
  if (flags.samples) {
    const csv = configurations.map((c) => samplesCsv(c.phase.batch, `${c.workload}-r${c.replicas}`));
    writeFileSync(flags.samples, SAMPLES_CSV_HEADER + csv.join(""));
  }
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`);
  const expectedConfigs = workloadNames.length * REPLICAS.length;
  const allOk =
    configurations.length === expectedConfigs &&
    configurations.every((c) => c.phase.completed === c.requests && c.resolvedTwice === 0);
  exitCode = allOk && !result.aborted ? 0 : 1;
  if (result.aborted) log(`run stopped early: ${result.aborted}`);
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 1;
} finally {
  run.finish();
  await services.stopAll();
  await cp?.stop();
  await server?.stop();
  for (const d of cacheDirs) rmSync(d, { recursive: true, force: true });
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
