// Benchmark: a resolver scaled out by buckets. Each workload runs against each replica count
// (--replicas), one phase per configuration: its own namespace on one control plane, a fresh
// lifecycle-controller, and replicas started together as a Deployment's pods (own POD_NAME, the
// resolver's ServiceAccount and shipped RBAC, --buckets, leader election on). Reported: who
// resolved what against what the held buckets predict, that none was resolved twice, and the CPU
// of every process, to say what bounds the throughput. The workloads: bench/README.md.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startGitServer } from "@quarry/devcluster/git-server";
import { installShardPolicy } from "@quarry/devcluster/install";
import { heldBuckets, type Replica, startReplica } from "@quarry/harness/replicas";
import { newScenario } from "@quarry/harness/scenario";
import { bucketLeaseName, bucketOf, DEFAULT_LEASE_TIMING } from "@quarry/kube";
import { type BenchContext, loadFlags, runBenchmark } from "./lib/benchmark.ts";
import { reapedChildrenCpuSeconds } from "./lib/git-procs.ts";
import { runPhase } from "./lib/phase.ts";
import { controlPlaneVersions, machineInfo, machineRows, versionOf } from "./lib/report.ts";
import { createWithRetry, deleteRequests, SAMPLES_CSV_HEADER, samplesCsv } from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { log, sleep } from "./lib/run.ts";
import { logWarnings } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";
import { columns, flagParams, type ValueRow, valueReport } from "./lib/value-rows.ts";
import {
  applyClusterTasks,
  buildGitWorkload,
  clusterRequest,
  configureGitNamespace,
  gitRequest,
  gitServerRequests,
} from "./lib/workloads.ts";

const WORKLOADS = ["cluster", "git", "git-hot"] as const;
type Workload = (typeof WORKLOADS)[number];
const SERVICE = { cluster: "cluster-resolver", git: "git-resolver", "git-hot": "git-resolver" } as const;
const isGit = (w: Workload) => w !== "cluster";

const FLAGS = {
  replicas: {
    type: "ints",
    default: "1,3",
    min: 1,
    help: "replica counts, measured in this order (1,3,3,1 shows order effects)",
  },
  buckets: { type: "int", default: 6, min: 1, help: "QUARRY_BUCKETS of every configuration" },
  "shard-label": {
    type: "string",
    default: "on",
    choices: ["on", "off"],
    help: "on: Quarry's shard policies installed and QUARRY_SHARD_LABEL=on, each replica watching only its buckets' requests",
  },
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

type Ctx = BenchContext<typeof FLAGS>;
type Setup = Awaited<ReturnType<typeof setup>>;

/** The git server and bench.git when a git workload runs, the control plane. */
async function setup(ctx: Ctx) {
  const f = ctx.flags;
  const versions = { ...controlPlaneVersions(), git: versionOf("git", ["--version"]) };
  const git = f.workloads.some((w) => isGit(w as Workload)) ? await startGitServer() : undefined;
  if (git) ctx.defer(() => git.stop());
  const gitFiles = { files: f["git-requests"], bulkMb: f["bulk-mb"] };
  const workload = git && (await buildGitWorkload(git, gitFiles));
  const plane = await ctx.controlPlane({ tekton: true });
  // as quarry-crds installs them with admissionPolicies.shardLabel: for the whole cluster
  if (f["shard-label"] === "on") await installShardPolicy(plane.admin);
  return { versions, server: git, workload, plane, clientStats: { retries: 0 } };
}

/** Waits until every bucket is held and the replicas' shares differ by at most one; each one's buckets. */
async function waitForSpread(replicas: readonly Replica[], ctx: Ctx): Promise<string[][]> {
  const { buckets, "spread-timeout": timeout } = ctx.flags;
  const deadline = performance.now() + timeout * 1000;
  for (;;) {
    const held = await Promise.all(replicas.map((r) => heldBuckets(r).catch(() => [] as string[])));
    const [all, counts] = [held.flat(), held.map((h) => h.length)];
    // each bucket held once
    const even =
      all.length === buckets &&
      new Set(all).size === buckets &&
      Math.max(...counts) - Math.min(...counts) <= 1;
    if (even || ctx.signal.aborted) return held;
    if (performance.now() > deadline) {
      log(`buckets not spread evenly after ${timeout} s: ${counts.join("+")}; measuring anyway`);
      return held;
    }
    await sleep(250);
  }
}

/** One workload against `n` replicas: the configuration's JSON and its measured batch. */
async function configuration(ctx: Ctx, s: Setup, w: Workload, n: number) {
  const f = ctx.flags;
  const { server, workload } = s;
  const service = SERVICE[w];
  const requests = w === "cluster" ? f.requests : f["git-requests"];
  log(`${w}: ${n} replica(s) of ${service}, ${f.buckets} buckets, shard label ${f["shard-label"]}`);
  const scn = await newScenario(`bench-scale-${w}-r${n}`, { cp: s.plane.info });
  if (w === "cluster") await applyClusterTasks(s.plane.admin, scn.namespace, f.tasks);
  else await configureGitNamespace(scn, server!, f["lifecycle-timeout"]);
  server?.setLatency(w === "git-hot" ? f["git-latency"] : 0);
  const lc = await ctx.services.start(scn, "lifecycle-controller");

  await scn.identity(service);
  const spreadStart = performance.now();
  const replicas = await Promise.all(
    Array.from({ length: n }, (_, k) => {
      const env: Record<string, string> = {
        LOG_LEVEL: f["log-level"],
        QUARRY_BUCKETS: String(f.buckets),
        QUARRY_SHARD_LABEL: f["shard-label"],
      };
      if (isGit(w)) {
        // a pod's emptyDir: every replica starts with an empty cache of its own
        const dir = mkdtempSync(join(tmpdir(), `quarry-bench-scale-cache-r${k + 1}-`));
        ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
        env.QUARRY_GIT_CACHE_DIR = dir;
      }
      return startReplica(scn, service, `r${k + 1}`, env);
    }),
  );
  const stats = replicas.map((r) => ctx.services.adopt(r.svc));
  const before = await waitForSpread(replicas, ctx);
  const spreadSeconds = round((performance.now() - spreadStart) / 1000, 1);
  log(
    `${w}: ${n} replica(s) ready, buckets ${before.map((b) => b.length).join("+")} after ${spreadSeconds} s`,
  );
  // each replica under its own name in the phase's CPU, logs and /metrics
  const names = replicas.map((r) => `${service}/${r.name}`);

  // the git processes' CPU and the server's log count from the first measured create on
  const gitCpu = () => replicas.map((r) => reapedChildrenCpuSeconds(r.svc.pid));
  const serverCpu = () => reapedChildrenCpuSeconds(process.pid);
  let from: { git: number[]; server: number; serverLog: number; load: number } | undefined;
  const openWindow = () => {
    from ??= { load: loadavg()[0]!, git: gitCpu(), server: serverCpu(), serverLog: server?.log.length ?? 0 };
  };
  const phase = await runPhase({
    name: `${w}-r${n}`,
    cp: s.plane.cp,
    namespace: scn.namespace,
    services: [lc.svc, ...replicas.map((r, k) => ({ ...r.svc, name: names[k]! }))],
    pids: s.plane.pids,
    concurrency: f.concurrency,
    warmup: f.warmup,
    requests,
    signal: ctx.signal,
    closedLoop: f["closed-loop"],
    resources: ["resolutionrequests", "leases"],
    send: async (client, name, i, sample) => {
      const warm = name.startsWith("warm-");
      if (!warm) openWindow();
      const rr =
        w === "cluster"
          ? clusterRequest(scn.namespace, name, i, f.tasks)
          : w === "git"
            ? gitRequest(workload!, scn.namespace, name, i, { warm })
            : // git-hot: warm-ups read the measured files too (each replica fetches them once)
              gitRequest(workload!, scn.namespace, name, i % f["hot-files"]);
      await createWithRetry(client, rr, s.clientStats, ctx.signal);
      sample.created = performance.now();
    },
  });
  openWindow();
  const window = from!;
  const git = gitCpu().map((c, k) => c - window.git[k]!);
  const serverSeconds = serverCpu() - window.server;
  const after = await Promise.all(replicas.map((r) => heldBuckets(r).catch(() => [] as string[])));

  // who resolved what, against the buckets each replica held at the start
  const owner = new Map(before.flatMap((held, k) => held.map((b) => [b, replicas[k]!.name] as const)));
  const expected: Record<string, number> = {};
  for (const { name } of phase.batch.samples) {
    const lease = bucketLeaseName(service, bucketOf(`${scn.namespace}/${name}`, f.buckets), f.buckets);
    const o = owner.get(lease) ?? "(nobody)";
    expected[o] = (expected[o] ?? 0) + 1;
  }
  const perReplica = await Promise.all(
    replicas.map(async (r, k) => {
      const view = resolverView(phase, names[k]!, isGit(w) ? "git" : "cluster");
      const delta = (metric: string, labels?: Record<string, string>) =>
        metricDelta(phase, names[k]!, metric, labels);
      const gitOp = (op: string) => [op, delta("quarry_git_operations_total", { operation: op })] as const;
      return {
        name: r.name,
        bucketsBefore: before[k] ?? [],
        bucketsAfter: after[k] ?? [],
        expected: expected[r.name] ?? 0,
        outcomes: view?.outcomes ?? {},
        resolved: view?.outcomes.succeeded ?? 0,
        bucketChanges: delta("quarry_bucket_changes_total"),
        inProcessMeanMs: view?.meanMs ?? Number.NaN,
        cpuSeconds: phase.cpu.processes[names[k]!] ?? Number.NaN,
        ...(isGit(w) && {
          gitCpuSeconds: round(git[k]!, 2),
          gitOps: Object.fromEntries(["fetch", "blob", "memory_hit"].map(gitOp)),
        }),
        process: await stats[k]!.final(),
        warnings: logWarnings(r.svc),
      };
    }),
  );
  const sorted = (b: string[]) => [...b].sort().join();

  // CPU: what bounds the throughput
  const gitTotal = git.reduce((a, b) => a + b, 0);
  const seconds: Record<string, number> = {
    ...phase.cpu.processes,
    "bench driver": phase.cpu.benchDriver,
    ...(isGit(w) && {
      "resolvers' git processes": round(gitTotal, 2),
      "git server (git http-backend)": round(serverSeconds, 2),
    }),
  };
  const wall = Math.max(phase.wallSeconds, 1e-3);
  const cpuTotal = Object.values(seconds).reduce((a, b) => a + b, 0);
  const measured = server?.log.slice(window.serverLog) ?? [];
  const json = {
    workload: w,
    replicas: n,
    requests,
    completed: phase.completed,
    failed: phase.failed,
    failures: phase.failures,
    wallSeconds: phase.wallSeconds,
    throughputPerSecond: phase.throughputPerSecond,
    latencyMs: phase.latencyMs,
    breakdown: phase.breakdown,
    timeline: phase.timeline,
    spreadSeconds,
    loadAtStart: round(window.load, 2),
    /** Σ succeeded resolutions − completed requests: > 0 means some request was resolved more than once */
    resolvedTwice: perReplica.reduce((a, r) => a + r.resolved, 0) - phase.completed,
    bucketsMoved: perReplica.some(
      (r) => r.bucketChanges > 0 || sorted(r.bucketsBefore) !== sorted(r.bucketsAfter),
    ),
    perReplica,
    lifecycle: await lc.stats.final(),
    gitServer: isGit(w)
      ? {
          requests: measured.length,
          byKind: gitServerRequests(measured),
          cpuSeconds: round(serverSeconds, 2),
        }
      : undefined,
    cpu: {
      seconds,
      /** each process's CPU ÷ wall time: 1.0 is one core busy the whole time */
      coresUsed: Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, round(v / wall, 2)])),
      machineBusyFraction: round(phase.cpu.machine / (wall * cpus().length), 2),
      foreignNet: round(phase.cpu.foreign - (isGit(w) ? gitTotal + serverSeconds : 0), 2),
      msPerRequest: round((cpuTotal * 1000) / Math.max(1, phase.completed), 1),
    },
    apiCalls: phase.apiCalls,
    client: phase.client,
  };

  // the next configuration starts from the same apiserver state
  await ctx.services.stop([lc.svc, ...replicas.map((r) => r.svc)]);
  const warm = Array.from({ length: f.warmup }, (_, i) => `warm-${String(i).padStart(5, "0")}`);
  const created = [...warm, ...phase.batch.samples.map((x) => x.name)];
  await deleteRequests(s.plane.admin, scn.namespace, created, ctx.signal);
  await sleep(1000);
  return { json, batch: phase.batch };
}

type Measured = Awaited<ReturnType<typeof configuration>>;
type Configuration = Measured["json"];

/** The markdown table: one row per configuration. */
const COLUMNS: readonly (readonly [string, (c: Configuration) => unknown])[] = [
  ["workload", (c) => c.workload],
  ["replicas", (c) => c.replicas],
  ["req/s", (c) => c.throughputPerSecond],
  ["p50 ms", (c) => c.latencyMs.p50],
  ["p99 ms", (c) => c.latencyMs.p99],
  [
    "resolved per replica (buckets predict)",
    (c) => c.perReplica.map((r) => `${r.resolved} (${r.expected})`).join(" / "),
  ],
  ["Σ − requests", (c) => c.resolvedTwice],
  ["machine busy", (c) => `${round(c.cpu.machineBusyFraction * 100, 0)} %`],
];

const leaseSetting = (env: string, ms: number) => process.env[`QUARRY_LEASE_${env}`] ?? `${ms / 1000}s`;

await runBenchmark({
  name: "scaling",
  about:
    "1 against 3 replicas of a resolver, by buckets: the same workload, who resolved what, what bounds the throughput.",
  deadline: 1800,
  flags: FLAGS,
  notes: `The services inherit this process's environment: QUARRY_CONCURRENCY (workers per replica, default 8),
QUARRY_LEASE_DURATION / _RENEW_DEADLINE / _RETRY_PERIOD (default 15s/10s/2s).`,

  setup,

  phases: (ctx, s) =>
    ctx.flags.workloads.flatMap((w) =>
      ctx.flags.replicas.map((n) => ({
        name: `${w}-r${n}`,
        run: () => configuration(ctx, s, w as Workload, n),
        stop: (c: Measured) => c.json.completed < c.json.requests,
      })),
    ),

  result(ctx, { versions }, configurations) {
    const f = ctx.flags;
    return {
      benchmark: "scaling",
      date: new Date().toISOString(),
      params: {
        ...flagParams(f, { "git-latency": "gitLatencyMs" }),
        requests: { cluster: f.requests, git: f["git-requests"], "git-hot": f["git-requests"] },
        lease: {
          duration: leaseSetting("DURATION", DEFAULT_LEASE_TIMING.leaseDurationMs),
          renewDeadline: leaseSetting("RENEW_DEADLINE", DEFAULT_LEASE_TIMING.renewDeadlineMs),
          retryPeriod: leaseSetting("RETRY_PERIOD", DEFAULT_LEASE_TIMING.retryPeriodMs),
        },
        workersPerReplica: process.env.QUARRY_CONCURRENCY ?? "8 (default)",
      },
      configurations: configurations.map((c) => c.json),
      machine: machineInfo(versions),
      loadAverage: loadavg().map((l) => round(l, 2)),
    };
  },

  report: (r) => {
    const md = columns(COLUMNS, r.configurations);
    const rows = r.configurations.map(({ timeline, ...c }): ValueRow => {
      const perReplica = Object.fromEntries(c.perReplica.map((x) => [x.name, x]));
      return [`${c.workload} × ${c.replicas}`, { ...c, perReplica }];
    });
    const end = `, ${r.machine.git}; load average at the end ${r.loadAverage.join(" ")}`;
    return valueReport([["params", r.params], ...rows, ...machineRows(r.machine, end)], md.header, md.rows);
  },

  ok: (r, ctx) =>
    r.configurations.length === ctx.flags.workloads.length * ctx.flags.replicas.length &&
    r.configurations.every((c) => c.completed === c.requests && c.resolvedTwice === 0),
  samples: (_s, configurations) =>
    SAMPLES_CSV_HEADER +
    configurations.map((c) => samplesCsv(c.batch, `${c.json.workload}-r${c.json.replicas}`)).join(""),
});
