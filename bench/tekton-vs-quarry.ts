// Tekton Pipelines' own resolvers side by side with Quarry's, on one control plane, one git
// server and one registry, over the same requests: Tekton's `resolvers` process (git, bundles,
// cluster, …) with its ResolutionRequest lifecycle reconciler (in Tekton's `controller` process)
// against Quarry's lifecycle-controller with its git, bundle and cluster resolvers. The two sides
// take turns (only one side's processes run at a time, started fresh for each run, the requests
// deleted between runs), and the order flips from one workload to the next.
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE, resolutionRequests } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import type { ControlPlane } from "@quarry/devcluster/controlplane";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { kinds } from "@quarry/devcluster/kinds";
import { type Registry, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import {
  buildTekton,
  installTektonPipelines,
  setTektonConfig,
  startTektonController,
  TEKTON_NAMESPACE,
  TEKTON_VERSION,
} from "@quarry/devcluster/tekton";
import { newRequest, newScenario, type Scenario, setConfig, taskManifest } from "@quarry/harness/scenario";
import { type KubeClient, RestKubeClient } from "@quarry/kube";
import { callsByClient, readAudit } from "./lib/audit.ts";
import { type BenchContext, onePhase, runBenchmark } from "./lib/benchmark.ts";
import {
  cachedRepo,
  fastImport,
  historyCommits,
  initBare,
  repoSizes,
  revParse,
  serveShared,
  taskYaml,
} from "./lib/git-repo.ts";
import { writePlotPng } from "./lib/plot.ts";
import { childPids } from "./lib/proc.ts";
import { controlPlaneVersions, machineInfo, versionOf } from "./lib/report.ts";
import {
  type BatchResult,
  createWithRetry,
  deleteRequests,
  runBatch,
  type Sample,
  trackRequests,
} from "./lib/requests.ts";
import { type BoundedRun, log, sleep } from "./lib/run.ts";
import { BenchServices } from "./lib/service-stats.ts";
import { type ProcessFigures, SideStats, sumFigures } from "./lib/side-stats.ts";
import { median, round, summarize } from "./lib/stats.ts";
import {
  findDescendant,
  installTektonResolvers,
  RESOLVERS_NAMESPACE,
  startTektonResolvers,
} from "./lib/tekton-resolvers.ts";

const SIDES = ["tekton", "quarry"] as const;
type Side = (typeof SIDES)[number];
const WORKLOADS = ["mixed", "burst", "large"] as const;
type Workload = (typeof WORKLOADS)[number];

const FLAGS = {
  mixed: {
    type: "int",
    default: 1000,
    min: 5,
    help: "requests of the mixed workload: git by branch, git by commit, bundle by tag, bundle by digest, cluster, in turn",
  },
  burst: {
    type: "int",
    default: 200,
    min: 1,
    help: "identical requests of the burst: git by branch, one file",
  },
  "large-mb": {
    type: "int",
    default: 300,
    min: 2,
    help: "content of the large repository, half in the tip tree, half in history",
  },
  "large-commits": {
    type: "int",
    default: 5,
    min: 1,
    help: "successive commits the large workload reads one file at",
  },
  concurrency: {
    type: "int",
    default: 16,
    min: 1,
    help: "clients creating the mixed workload's requests (the burst uses 50)",
  },
  workloads: {
    type: "list",
    default: WORKLOADS.join(","),
    choices: WORKLOADS,
    help: "a subset of the workloads",
  },
  rounds: { type: "int", default: 1, min: 1, help: "runs of each side per workload, alternating" },
  timeout: {
    type: "string",
    default: "10m",
    arg: "D",
    help: "both lifecycle controllers' default-maximum-resolution-timeout",
  },
  plots: {
    type: "string",
    default: join(import.meta.dirname, "..", "docs", "images"),
    arg: "DIR",
    help: 'where the PNG plots go ("" for none)',
  },
  "log-level": { type: "string", default: "info", arg: "L", help: "Quarry's services' LOG_LEVEL" },
} as const;

// set from the flags when the run starts; read by the functions below
let flags!: BenchContext<typeof FLAGS>["flags"];
let run!: BoundedRun;
let [MIXED, BURST, LARGE_MB, LARGE_COMMITS, CONCURRENCY, ROUNDS] = [0, 0, 0, 0, 0, 0];
let workloads: Workload[] = [];

const BURST_CLIENTS = 50;
const DEFS = 20; // Tasks in the definitions repository and in the cluster
const BUNDLES = 10;
const FILE_KIB = 32;

/** A request's labels and params, the same for both sides. */
interface RequestSpec {
  type: "git" | "bundles" | "cluster";
  what: string;
  params: Record<string, string>;
}

interface Fixtures {
  ns: string;
  defsUrl: string;
  defsCommit: string;
  largeUrl: string;
  largeCommits: string[];
  bundleTags: string[];
  bundleDigests: string[];
}

function mixedRequest(f: Fixtures, i: number): RequestSpec {
  const j = Math.floor(i / 5) % DEFS;
  const b = j % BUNDLES;
  const path = `tasks/task-${j}.yaml`;
  switch (i % 5) {
    case 0:
      return {
        type: "git",
        what: "git by branch",
        params: { url: f.defsUrl, revision: "main", pathInRepo: path },
      };
    case 1:
      return {
        type: "git",
        what: "git by commit",
        params: { url: f.defsUrl, revision: f.defsCommit, pathInRepo: path },
      };
    case 2:
      return {
        type: "bundles",
        what: "bundle by tag",
        params: { bundle: f.bundleTags[b]!, name: `b-${b}`, kind: "task" },
      };
    case 3:
      return {
        type: "bundles",
        what: "bundle by digest",
        params: { bundle: f.bundleDigests[b]!, name: `b-${b}`, kind: "task" },
      };
    default:
      return {
        type: "cluster",
        what: "cluster",
        params: { kind: "task", name: `task-${j}`, namespace: f.ns },
      };
  }
}

const burstRequest = (f: Fixtures): RequestSpec => ({
  type: "git",
  what: "git by branch",
  params: { url: f.defsUrl, revision: "main", pathInRepo: "tasks/task-0.yaml" },
});

const largeRequest = (f: Fixtures, i: number): RequestSpec => ({
  type: "git",
  what: `git by commit (${i + 1} of ${f.largeCommits.length})`,
  params: { url: f.largeUrl, revision: f.largeCommits[i]!, pathInRepo: "task.yaml" },
});

interface RunResult {
  workload: Workload;
  side: Side;
  round: number;
  requests: number;
  completed: number;
  failed: number;
  failures: string[];
  wallSeconds: number;
  throughputPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** every API call the side's processes made in the window (audit log), and by kind */
  apiCalls: number;
  apiCallsByKind: Record<string, number>;
  gitRequests: number;
  gitFetches: number;
  registryRequests: number;
  registryBlobGets: number;
  processes: ProcessFigures[];
  total: { peakRssMiB: number; treePeakMiB: number; cpuSeconds: number };
  /** (seconds since the first create, completed) for the plot */
  completions: [number, number][];
  /** per request in order, ms (large workload's plot) */
  perRequestMs: number[];
}

let cp: ControlPlane | undefined;
let gitServer: GitServer | undefined;
let registry: Registry | undefined;
let stopSide: (() => Promise<void>) | undefined;

/** Starts one side's processes; returns their pids (for the figures) and how to stop them. */
async function startSide(
  side: Side,
  ctx: {
    admin: KubeClient;
    tektonDir: string;
    scn: Scenario;
    hostPorts: number[];
    cacheRun: string;
    logDir: string;
  },
): Promise<{ procs: { name: string; pid: number }[]; stop: () => Promise<void> }> {
  const { admin, scn } = ctx;
  const info = scn.cp;
  if (side === "tekton") {
    // a stopped Tekton process leaves its leases held until they expire (60 s): start afresh
    for (const leaseNs of [TEKTON_NAMESPACE, RESOLVERS_NAMESPACE]) {
      const leases = await admin.list(kinds.Lease!, leaseNs);
      for (const l of leases.items)
        await admin.delete(kinds.Lease!, leaseNs, l.metadata.name!).catch(() => {});
    }
    const logs = ctx.logDir;
    const controller = await startTektonController(admin, {
      cp: info,
      tektonDir: ctx.tektonDir,
      logFile: join(logs, `tekton-controller-${ctx.cacheRun}.log`),
    });
    run.track(controller.pid);
    const controllerPid = await findDescendant(controller.pid, "controller");
    run.track(controllerPid);
    let resolvers: Awaited<ReturnType<typeof startTektonResolvers>>;
    try {
      resolvers = await startTektonResolvers(admin, {
        cp: info,
        tektonDir: ctx.tektonDir,
        logFile: join(logs, `tekton-resolvers-${ctx.cacheRun}.log`),
        hostPorts: ctx.hostPorts,
      });
    } catch (err) {
      await controller.stop();
      throw err;
    }
    run.track(resolvers.pid);
    run.track(resolvers.programPid);
    return {
      procs: [
        { name: "Tekton controller", pid: controllerPid },
        { name: "Tekton resolvers", pid: resolvers.programPid },
      ],
      stop: async () => {
        await Promise.all([resolvers.stop(), controller.stop()]);
      },
    };
  }
  const services = new BenchServices(run, flags["log-level"]);
  const procs: { name: string; pid: number }[] = [];
  try {
    for (const service of ["lifecycle-controller", "git-resolver", "bundle-resolver", "cluster-resolver"]) {
      const env: Record<string, string> =
        service === "git-resolver"
          ? { QUARRY_GIT_CACHE_DIR: join(info.dir, `git-cache-${ctx.cacheRun}`) }
          : {};
      const { svc } = await services.start(scn, service, env);
      procs.push({ name: service, pid: svc.pid });
    }
  } catch (err) {
    await services.stopAll();
    throw err;
  }
  return { procs, stop: () => services.stopAll() };
}

/** Deletes the namespace's requests and waits until none is left. */
async function clearRequests(admin: KubeClient, ns: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const list = await admin.list(resolutionRequests, ns);
    if (list.items.length === 0) return;
    await deleteRequests(
      admin,
      ns,
      list.items.map((o) => o.metadata.name!),
      run.signal,
    );
    await sleep(500);
  }
  throw new Error(`requests in ${ns} still there after 60 s`);
}

const isSide = (side: Side, user: string, ns: string) =>
  side === "tekton"
    ? user.includes(":tekton-pipelines")
    : user.startsWith(`system:serviceaccount:${ns}:`) && user.includes("quarry-");

async function measure(
  workload: Workload,
  side: Side,
  round_: number,
  f: Fixtures,
  ctx: Parameters<typeof startSide>[1],
): Promise<RunResult> {
  const { admin } = ctx;
  log(`${workload} / ${side} (round ${round_ + 1}): starting ${side}'s processes`);
  const started = await startSide(side, ctx);
  stopSide = started.stop;
  const stats = new SideStats(started.procs);
  const gitFrom = gitServer!.log.length;
  registry!.clearLog();
  const clientStats = { retries: 0 };
  const watch = trackRequests(run.signal, RestKubeClient.fromEnvironment(ctx.scn.cp.adminKubeconfig), f.ns);
  const { tracker } = watch;
  let batch: BatchResult;
  const wallFrom = Date.now();
  try {
    await watch.ready;
    const [n, clients, spec, closedLoop] = (
      {
        mixed: [MIXED, CONCURRENCY, (i: number) => mixedRequest(f, i), false],
        burst: [BURST, BURST_CLIENTS, () => burstRequest(f), false],
        large: [f.largeCommits.length, 1, (i: number) => largeRequest(f, i), true],
      } as const
    )[workload];
    const kube = Array.from({ length: clients }, () =>
      RestKubeClient.fromEnvironment(ctx.scn.cp.adminKubeconfig),
    );
    log(`${workload} / ${side}: ${n} requests, ${clients} clients${closedLoop ? ", one at a time" : ""}`);
    batch = await runBatch({
      clients: kube,
      prefix: `${workload}-${side}-${round_}`,
      n,
      tracker,
      signal: run.signal,
      closedLoop,
      send: async (client, name, i, s: Sample) => {
        const r = spec(i);
        await createWithRetry(
          client,
          newRequest(f.ns, name, { [LABEL_RESOLVER_TYPE]: r.type }, r.params),
          clientStats,
          run.signal,
        );
        s.created = performance.now();
      },
    });
  } finally {
    await watch.stop();
  }
  const wallTo = Date.now();
  const processes = stats.final();
  await started.stop();
  stopSide = undefined;
  // the audit log's last lines (requests finishing at the stop) land after it
  await sleep(1500);
  const calls = readAudit(cp!.auditLog!, wallFrom, wallTo).filter((c) => isSide(side, c.user, f.ns));
  const byKind = callsByClient(calls, () => side)[side] ?? {};
  const gitLog = gitServer!.log.slice(gitFrom);
  const regLog = registry!.accessLog();
  const samples = batch.samples;
  const done = samples.filter((s) => s.done !== undefined);
  const failed = samples.filter((s) => s.failed !== undefined && s.done === undefined);
  const lat = summarize(done.map((s) => s.done! - s.t0));
  const wallSeconds = (batch.end - batch.start) / 1000;
  const ends = done.map((s) => (s.done! - batch.start) / 1000).sort((a, b) => a - b);
  const result: RunResult = {
    workload,
    side,
    round: round_,
    requests: samples.length,
    completed: done.length,
    failed: failed.length,
    failures: [...new Set(failed.map((s) => s.failed ?? ""))].slice(0, 5),
    wallSeconds: round(wallSeconds, 2),
    throughputPerSecond: round(done.length / wallSeconds, 2),
    latencyMs: {
      p50: round(lat.p50, 0),
      p90: round(lat.p90, 0),
      p99: round(lat.p99, 0),
      max: round(lat.max, 0),
    },
    apiCalls: calls.length,
    apiCallsByKind: byKind,
    gitRequests: gitLog.length,
    gitFetches: gitLog.filter((e) => e.command === "fetch").length,
    registryRequests: regLog.length,
    registryBlobGets: regLog.filter((e) => e.method === "GET" && e.path.includes("/blobs/")).length,
    processes,
    total: sumFigures(processes),
    completions: [[0, 0], ...ends.map((t, i): [number, number] => [round(t, 3), i + 1])],
    perRequestMs: samples.map((s) => (s.done !== undefined ? round(s.done - s.t0, 0) : Number.NaN)),
  };
  if (result.failures.length) log(`${workload} / ${side}: failures: ${result.failures.join(" | ")}`);
  log(
    `${workload} / ${side}: ${done.length}/${samples.length} in ${result.wallSeconds} s (${result.throughputPerSecond}/s), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ${calls.length} API calls, ${result.gitFetches} git fetches, ${result.registryRequests} registry requests, RSS ${result.total.peakRssMiB} MiB, CPU ${result.total.cpuSeconds} s`,
  );
  await clearRequests(admin, f.ns);
  return result;
}

// ---- figures ----

const ratio = (q: number, t: number) => (t > 0 && Number.isFinite(q) ? round(q / t, 2) : Number.NaN);

interface Row {
  label: string;
  get: (r: RunResult) => number;
  /** true when less is better (the ratio reads "Quarry uses x of Tekton's") */
  lower: boolean;
}
const ROWS: Row[] = [
  { label: "completed", get: (r) => r.completed, lower: false },
  { label: "throughput (requests/s)", get: (r) => r.throughputPerSecond, lower: false },
  { label: "latency p50 (ms)", get: (r) => r.latencyMs.p50, lower: true },
  { label: "latency p99 (ms)", get: (r) => r.latencyMs.p99, lower: true },
  { label: "API requests", get: (r) => r.apiCalls, lower: true },
  { label: "git fetches (server)", get: (r) => r.gitFetches, lower: true },
  { label: "git HTTP requests", get: (r) => r.gitRequests, lower: true },
  { label: "registry requests", get: (r) => r.registryRequests, lower: true },
  { label: "peak RSS, processes summed (MiB)", get: (r) => r.total.peakRssMiB, lower: true },
  { label: "peak PSS with git children (MiB)", get: (r) => r.total.treePeakMiB, lower: true },
  { label: "CPU, processes + children (s)", get: (r) => r.total.cpuSeconds, lower: true },
];

function tableFor(w: Workload, results: RunResult[]): { text: string; figures: Record<string, unknown> } {
  const of = (side: Side) => results.filter((r) => r.workload === w && r.side === side);
  const t = of("tekton");
  const q = of("quarry");
  const lines = [
    `${w}:`,
    `  ${"".padEnd(34)} ${"Tekton".padStart(10)} ${"Quarry".padStart(10)}  Quarry/Tekton`,
  ];
  const figures: Record<string, unknown> = {};
  for (const row of ROWS) {
    const tv = median(t.map(row.get));
    const qv = median(q.map(row.get));
    figures[row.label] = { tekton: tv, quarry: qv, ratio: ratio(qv, tv) };
    lines.push(
      `  ${row.label.padEnd(34)} ${String(tv).padStart(10)} ${String(qv).padStart(10)}  ${String(ratio(qv, tv)).padStart(6)}`,
    );
  }
  for (const side of SIDES) {
    for (const r of of(side)) {
      const procs = r.processes
        .map((p) => `${p.name} ${p.peakRssMiB} MiB / ${p.treePeakMiB} MiB / ${p.cpuSeconds} s`)
        .join("; ");
      lines.push(`  ${side} round ${r.round + 1}: ${procs}`);
      if (r.failures.length) lines.push(`    failures: ${r.failures.join(" | ")}`);
    }
  }
  return { text: lines.join("\n"), figures };
}

const COLORS: Record<Side, string> = { tekton: "#d9480f", quarry: "#1864ab" };

function plot(w: Workload, results: RunResult[], dir: string): string {
  const file = join(dir, `tekton-vs-quarry-${w}.png`);
  const n = w === "mixed" ? MIXED : BURST;
  const series = SIDES.flatMap((side) => {
    const r = results.find((x) => x.workload === w && x.side === side);
    const name = side === "tekton" ? "Tekton" : "Quarry";
    if (!r) return [];
    return w === "large"
      ? [
          {
            label: name,
            color: COLORS[side],
            markers: true,
            points: r.perRequestMs.map((ms, i): [number, number] => [i, ms]),
          },
        ]
      : [{ label: `${name} (${r.completed}/${n})`, color: COLORS[side], points: r.completions }];
  });
  writePlotPng(
    w === "large"
      ? {
          title: `One file from a ${LARGE_MB} MB repository at ${LARGE_COMMITS} successive commits`,
          xLabel: "request (commit, oldest first)",
          yLabel: "latency (ms)",
          series,
          xNames: Array.from({ length: LARGE_COMMITS }, (_, i) => `main~${LARGE_COMMITS - 1 - i}`),
        }
      : {
          title:
            w === "mixed"
              ? `${n} mixed requests (git branch/commit, bundle tag/digest, cluster): completions`
              : `A burst of ${n} identical git requests: completions`,
          xLabel: "seconds since the first create",
          yLabel: "requests succeeded",
          series,
        },
    file,
  );
  return file;
}

// ---- the run ----

await runBenchmark({
  name: "tekton-vs-quarry",
  about: "Tekton Pipelines' own resolvers side by side with Quarry's, on the same requests, taking turns.",
  deadline: 3600,
  flags: FLAGS,
  notes: "quick: --mixed 50 --burst 20 --large-mb 10 --large-commits 3 --plots /tmp/plots",
  async setup(ctx) {
    flags = ctx.flags;
    run = ctx.run;
    [MIXED, BURST, LARGE_MB, LARGE_COMMITS, CONCURRENCY, ROUNDS] = [
      flags.mixed,
      flags.burst,
      flags["large-mb"],
      flags["large-commits"],
      flags.concurrency,
      flags.rounds,
    ];
    workloads = flags.workloads as Workload[];
    return {};
  },
  phases: (ctx) =>
    onePhase("sides", async () => {
      const out: string[] = [];
      const versions = {
        ...controlPlaneVersions(),
        git: versionOf("git", ["--version"]),
        tekton: TEKTON_VERSION,
      };
      log("building (or finding) Tekton's controller and resolvers");
      const tektonDir = await buildTekton(run.signal);

      // ---- the large repository: generated once, cached under ~/.cache/quarry/bench ----
      const treeFiles = Math.max(1, Math.round(((LARGE_MB / 2) * 1024) / FILE_KIB));
      const historyCommitsN = Math.max(LARGE_COMMITS, 100);
      const perCommit = Math.max(1, Math.ceil(((LARGE_MB / 2) * 1024) / FILE_KIB / historyCommitsN));
      const key = `tekton-vs-quarry-v1-${treeFiles}x${FILE_KIB}k-${historyCommitsN}x${perCommit}`;
      let largeCache: string | undefined;
      if (workloads.includes("large")) {
        const g0 = performance.now();
        const { gitDir, built } = await cachedRepo(key, async (dir) => {
          log(`generating ${key} (${LARGE_MB} MB of content; once, then cached)`);
          await fastImport(
            dir,
            historyCommits({
              files: treeFiles,
              fileBytes: FILE_KIB * 1024,
              commits: historyCommitsN,
              filesPerCommit: perCommit,
              taskPath: "task.yaml",
            }),
          );
        });
        largeCache = gitDir;
        log(
          `large repository ${built ? "generated" : "cached"} in ${round((performance.now() - g0) / 1000, 1)} s`,
        );
      }

      // ---- servers ----
      const bench = await ctx.controlPlane({ auditLog: true, runCrds: "none" });
      const plane = bench.cp;
      cp = plane;
      const info = {
        server: plane.server,
        caFile: plane.caFile,
        dir: plane.dir,
        adminKubeconfig: plane.adminKubeconfig,
      };
      const admin = bench.admin;
      await installTektonPipelines(admin, tektonDir);
      await setTektonConfig(admin, "config-defaults", {
        "default-maximum-resolution-timeout": flags.timeout,
      });
      await installTektonResolvers(admin, {
        // as released but hub and http off: neither is measured, and hub would reach for the internet
        "resolvers-feature-flags": { "enable-hub-resolver": "false", "enable-http-resolver": "false" },
        "git-resolver-config": { "fetch-timeout": "5m" },
      });
      gitServer = await startGitServer();
      ctx.defer(() => gitServer?.stop());
      registry = await startRegistry();
      ctx.defer(() => registry?.dispose());
      run.track(childPids(process.pid, "registry")[0]);

      const s = await newScenario("bench-tvq", { cp: info });
      ctx.defer(() => s.cleanup());
      // the side running when the run stops goes first
      ctx.defer(() => stopSide?.());
      const ns = s.namespace;
      // Tekton's bundle resolver reads the request namespace's default ServiceAccount (bundleresolver-config)
      await applyObject(admin, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "default", namespace: ns },
      });
      await setConfig(s, "lifecycle-controller-config", {
        "default-maximum-resolution-timeout": flags.timeout,
      });
      await setConfig(s, "git-resolver-config", { "fetch-timeout": "5m" });
      for (let j = 0; j < DEFS; j++) await applyObject(admin, taskManifest(ns, `task-${j}`));

      const defsDir = join(gitServer.root, "defs.git");
      await initBare(defsDir);
      await fastImport(defsDir, [
        {
          ref: "refs/heads/main",
          message: "definitions",
          when: Math.floor(Date.now() / 1000),
          files: Array.from({ length: DEFS }, (_, j): [string, string] => [
            `tasks/task-${j}.yaml`,
            taskYaml(`task-${j}`),
          ]),
        },
      ]);
      const defsCommit = await revParse(defsDir, "refs/heads/main");
      let largeCommits: string[] = [];
      let largeSizes: { packBytes: number; objects: number } | undefined;
      if (largeCache) {
        const served = await serveShared(largeCache, gitServer.root, "large.git");
        largeCommits = [];
        for (let i = LARGE_COMMITS - 1; i >= 0; i--)
          largeCommits.push(await revParse(served, `refs/heads/main~${i}`));
        largeSizes = await repoSizes(largeCache);
      }
      const reg = registry;
      log(`pushing ${BUNDLES} bundles`);
      const bundleTags: string[] = [];
      const bundleDigests: string[] = [];
      for (let b = 0; b < BUNDLES; b++) {
        const tag = reg.ref(`bench/b-${b}:v1`);
        const { digest } = await tknBundlePush(tag, [taskYaml(`b-${b}`)]);
        bundleTags.push(tag);
        bundleDigests.push(`${reg.host}/bench/b-${b}@${digest}`);
      }
      const fixtures: Fixtures = {
        ns,
        defsUrl: gitServer.url("defs.git"),
        defsCommit,
        largeUrl: gitServer.url("large.git"),
        largeCommits,
        bundleTags,
        bundleDigests,
      };
      // Tekton's logs outlive the control plane's directory, for a look after the run
      const logDir = mkdtempSync(join(tmpdir(), "quarry-tekton-vs-quarry-logs-"));
      log(`Tekton's logs: ${logDir}`);
      const ctxBase = { admin, tektonDir, scn: s, hostPorts: [gitServer.port, reg.port], logDir };

      const results: RunResult[] = [];
      let runNo = 0;
      for (let r = 0; r < ROUNDS; r++) {
        for (const [wi, w] of workloads.entries()) {
          const order: Side[] = (r + wi) % 2 === 0 ? ["tekton", "quarry"] : ["quarry", "tekton"];
          for (const side of order) {
            if (run.signal.aborted) throw run.signal.reason;
            results.push(await measure(w, side, r, fixtures, { ...ctxBase, cacheRun: String(runNo++) }));
          }
        }
      }

      const tables = workloads.map((w) => tableFor(w, results));
      const plots: string[] = [];
      if (flags.plots) {
        mkdirSync(flags.plots, { recursive: true });
        for (const w of workloads) plots.push(plot(w, results, flags.plots));
      }
      out.push(
        `\nTekton ${TEKTON_VERSION} (controller + resolvers) vs Quarry (lifecycle-controller + git/bundle/cluster resolvers)`,
      );
      out.push(`medians over ${ROUNDS} run(s) per side; ratios are Quarry/Tekton\n`);
      for (const t of tables) out.push(`${t.text}\n`);
      if (plots.length) out.push(`plots: ${plots.join(", ")}`);
      const allOk = results.every((x) => x.completed === x.requests);
      const json = {
        benchmark: "tekton-vs-quarry",
        date: new Date().toISOString(),
        machine: machineInfo(versions),
        params: {
          mixed: MIXED,
          burst: BURST,
          burstClients: BURST_CLIENTS,
          largeMb: LARGE_MB,
          largeCommits: LARGE_COMMITS,
          largeRepo: largeSizes,
          concurrency: CONCURRENCY,
          rounds: ROUNDS,
          timeout: flags.timeout,
        },
        figures: Object.fromEntries(workloads.map((w, i) => [w, tables[i]!.figures])),
        runs: results.map(({ completions: _c, ...rest }) => rest),
        seconds: round((performance.now() - ctx.startedAt) / 1000, 1),
      };
      return { json, text: out.join("\n"), allOk };
    }),
  result: (_ctx, _s, [m]) => {
    if (!m) throw new Error("no run");
    return m.json;
  },
  report: (_r, _ctx, _s, [m]) => m?.text ?? "",
  ok: (_r, _ctx, _s, [m]) => m?.allOk === true,
});
