// Tekton Pipelines' own resolvers side by side with Quarry's, on one control plane, one git server
// and one registry, over the same requests: Tekton's `resolvers` process with its
// ResolutionRequest reconciler (in Tekton's `controller`) against Quarry's lifecycle-controller and
// its git, bundle and cluster resolvers (the http workload: its http resolver, fetching from a
// loopback HTTP server). --mode: Quarry as a fleet (a process per service), all-in-one (those
// components in one services/all-in-one process), or both, each a side of its own; --as-image runs
// Quarry as its images do (type-stripped .js, the charts' NODE_OPTIONS). One phase per round,
// workload and side: only one side's processes run at a time, started fresh and stopped after, the
// requests deleted between phases; the order of the sides turns from one workload to the next.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE, resolutionRequests } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { startGitServer } from "@quarry/devcluster/git-server";
import { startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import {
  buildTekton,
  installTektonPipelines,
  setTektonConfig,
  TEKTON_VERSION,
} from "@quarry/devcluster/tekton";
import { type HttpFixture, startHttpFixture } from "@quarry/harness/http-server";
import { newRequest, newScenario, setConfig, taskManifest } from "@quarry/harness/scenario";
import { RestKubeClient } from "@quarry/kube";
import { callsByClient, readAudit } from "./lib/audit.ts";
import { type BenchContext, runBenchmark } from "./lib/benchmark.ts";
import { reapedChildrenCpuSeconds, TreeRssSampler } from "./lib/git-procs.ts";
import {
  cachedHistory,
  commitFiles,
  initBare,
  repoSizes,
  revParse,
  serveShared,
  taskYaml,
} from "./lib/git-repo.ts";
import { type PlotSeries, writePlotPng } from "./lib/plot.ts";
import { childPids, cpuSeconds, vmKiB } from "./lib/proc.ts";
import { MODE_CHOICES, modesOf, type QuarryMode, startQuarry } from "./lib/quarry-modes.ts";
import { controlPlaneVersions, machineInfo, versionOf } from "./lib/report.ts";
import { connections, createWithRetry, deleteRequests, runBatch, trackRequests } from "./lib/requests.ts";
import { log, sleep } from "./lib/run.ts";
import { MiB } from "./lib/service-stats.ts";
import { median, round, summarize } from "./lib/stats.ts";
import { installTektonResolvers, startTektonSide } from "./lib/tekton-resolvers.ts";
import { columns, flagParams, type ValueRow, valueReport } from "./lib/value-rows.ts";

/** tekton, and Quarry in each of its modes: "quarry" its fleet (the side's name before --mode), "quarry-aio" all-in-one */
const SIDES = ["tekton", "quarry", "quarry-aio"] as const;
type Side = (typeof SIDES)[number];
const SIDE_OF_MODE: Record<QuarryMode, Side> = { fleet: "quarry", "all-in-one": "quarry-aio" };
const MODE_OF_SIDE: Partial<Record<Side, QuarryMode>> = { quarry: "fleet", "quarry-aio": "all-in-one" };
const SIDE_STYLE = {
  tekton: ["Tekton", "#d9480f"],
  quarry: ["Quarry", "#1864ab"],
  "quarry-aio": ["Quarry all-in-one", "#2b8a3e"],
} as const;
/** The sides a run measures: Tekton and Quarry in each mode --mode names. */
const sidesOf = (mode: string): Side[] => ["tekton", ...modesOf(mode).map((m) => SIDE_OF_MODE[m])];
const WORKLOADS = ["mixed", "burst", "large", "http"] as const;
type Workload = (typeof WORKLOADS)[number];
/** Quarry's processes per workload: the http workload needs only the http resolver */
const QUARRY_SERVICES = {
  resolvers: ["lifecycle-controller", "git-resolver", "bundle-resolver", "cluster-resolver"],
  http: ["lifecycle-controller", "http-resolver"],
};
const quarryServices = (w: Workload) => (w === "http" ? QUARRY_SERVICES.http : QUARRY_SERVICES.resolvers);

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
  http: {
    type: "int",
    default: 1000,
    min: 2,
    help: "requests of the http workload: one Task file by URL, every other one pinned by its sha256 digest",
  },
  concurrency: {
    type: "int",
    default: 16,
    min: 1,
    help: "clients creating the mixed and http workloads' requests (the burst uses 50)",
  },
  workloads: {
    type: "list",
    default: WORKLOADS.join(","),
    choices: WORKLOADS,
    help: "a subset of the workloads",
  },
  rounds: { type: "int", default: 1, min: 1, help: "runs of each side per workload, alternating" },
  mode: {
    type: "string",
    default: "fleet",
    choices: MODE_CHOICES,
    help: "Quarry's side: fleet (a process per service), all-in-one (one process), or both, two sides",
  },
  "as-image": {
    type: "boolean",
    help: "run Quarry from its images' trees (type-stripped .js, the charts' NODE_OPTIONS), not its sources",
  },
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

const BURST_CLIENTS = 50;
/** http-resolver-config's fetch-timeout on both sides: Tekton's and Quarry's default, written out */
const HTTP_FETCH_TIMEOUT = "1m";
const DEFS = 20; // Tasks in the definitions repository and in the cluster
const BUNDLES = 10;
const FILE_KIB = 32;

type Ctx = BenchContext<typeof FLAGS>;
type Setup = Awaited<ReturnType<typeof setup>>;

/** A request's resolver type and params, the same for both sides. */
type RequestSpec = readonly [type: "git" | "bundles" | "cluster" | "http", params: Record<string, string>];

/** The http workload's request i: file i/2 mod DEFS by URL, odd ones pinned by the content's digest. */
function httpRequest(s: Setup, i: number): RequestSpec {
  const j = Math.floor(i / 2) % DEFS;
  const url = `${s.web.base}/tasks/task-${j}.yaml`;
  return ["http", i % 2 === 1 ? { url, digest: `sha256:${s.httpDigests[j]}` } : { url }];
}
const httpKind = (i: number) => (i % 2 === 1 ? "pinned" : "unpinned");

/** Each workload's requests, clients and pacing. */
function workload(w: Workload, s: Setup, f: Ctx["flags"]) {
  const git = (revision: string, path: string, url = s.defsUrl): RequestSpec => [
    "git",
    { url, revision, pathInRepo: path },
  ];
  const bundle = (ref: string, b: number): RequestSpec => [
    "bundles",
    { bundle: ref, name: `b-${b}`, kind: "task" },
  ];
  const mixed = (i: number): RequestSpec => {
    const j = Math.floor(i / 5) % DEFS;
    const b = j % BUNDLES;
    const path = `tasks/task-${j}.yaml`;
    return [
      git("main", path),
      git(s.defsCommit, path),
      bundle(s.bundles[b]!.tag, b),
      bundle(s.bundles[b]!.digest, b),
      ["cluster", { kind: "task", name: `task-${j}`, namespace: s.scn.namespace }] as const,
    ][i % 5]!;
  };
  return {
    mixed: { n: f.mixed, clients: f.concurrency, closedLoop: false, request: mixed },
    burst: {
      n: f.burst,
      clients: BURST_CLIENTS,
      closedLoop: false,
      request: () => git("main", "tasks/task-0.yaml"),
    },
    large: {
      n: s.largeCommits.length,
      clients: 1,
      closedLoop: true,
      request: (i: number) => git(s.largeCommits[i]!, "task.yaml", s.largeUrl),
    },
    http: {
      n: f.http,
      clients: f.concurrency,
      closedLoop: false,
      request: (i: number) => httpRequest(s, i),
      /** the latency is also given per kind of request */
      kind: httpKind,
    },
  }[w];
}

/** Each process's peak RSS (VmHWM), sampled peak PSS with its children (git) and CPU with reaped children, from now to `final()`. */
function sideStats(procs: readonly { name: string; pid: number }[]) {
  const cpu = (pid: number) => (cpuSeconds(pid) ?? 0) + reapedChildrenCpuSeconds(pid);
  const watched = procs.map((p) => ({ ...p, tree: new TreeRssSampler(p.pid, 200), cpu0: cpu(p.pid) }));
  return () => {
    const processes = watched.map(({ name, pid, tree, cpu0 }) => {
      tree.stop();
      const [peakRssMiB, treePeakMiB] = [MiB(vmKiB(pid, "VmHWM")), MiB(tree.maxTreeKiB)];
      return { name, pid, peakRssMiB, treePeakMiB, cpuSeconds: round(cpu(pid) - cpu0, 2) };
    });
    const total = { peakRssMiB: 0, treePeakMiB: 0, cpuSeconds: 0 };
    for (const k of Object.keys(total) as (keyof typeof total)[])
      total[k] = round(
        processes.reduce((a, p) => a + p[k], 0),
        2,
      );
    return { processes, total };
  };
}

/** Starts one side's processes; their names and pids (for the figures) and how to stop them. */
async function startSide(ctx: Ctx, s: Setup, w: Workload, side: Side, runNo: number) {
  const { info } = s.plane;
  const mode = MODE_OF_SIDE[side];
  if (mode) {
    const gitCache = join(info.dir, `git-cache-${runNo}`);
    const started = await startQuarry(ctx.services, s.scn, {
      mode,
      services: quarryServices(w),
      imageDir: s.imageDir,
      env: (service): Record<string, string> =>
        service === "git-resolver" ? { QUARRY_GIT_CACHE_DIR: gitCache } : {},
    });
    return { procs: started.procs.map(({ name, pid }) => ({ name, pid })), stop: started.stop };
  }
  return startTektonSide(s.plane.admin, {
    cp: info,
    tektonDir: s.tektonDir,
    logFile: (name) => join(s.logDir, `tekton-${name}-${runNo}.log`),
    hostPorts: [s.git.port, s.registry.port, s.webPort],
    track: (pid) => ctx.run.track(pid),
  });
}

/** Deletes the namespace's requests and waits until none is left. */
async function clearRequests(ctx: Ctx, s: Setup): Promise<void> {
  const ns = s.scn.namespace;
  for (let i = 0; i < 120; i++) {
    const names = (await s.plane.admin.list(resolutionRequests, ns)).items.map((o) => o.metadata.name!);
    if (names.length === 0) return;
    await deleteRequests(s.plane.admin, ns, names, ctx.signal);
    await sleep(500);
  }
  throw new Error(`requests in ${ns} still there after 60 s`);
}

/** One side's run of one workload: its processes started fresh, the requests, the figures. */
async function measure(ctx: Ctx, s: Setup, w: Workload, side: Side, round_: number, runNo: number) {
  log(`${w} / ${side} (round ${round_ + 1}): starting ${side}'s processes`);
  const started = await startSide(ctx, s, w, side, runNo);
  s.stopSide = started.stop;
  const final = sideStats(started.procs);
  const gitFrom = s.git.log.length;
  s.registry.clearLog();
  const webFrom = s.web.requests.length;
  const clientStats = { retries: 0 };
  const kubeconfig = s.plane.info.adminKubeconfig;
  const watch = trackRequests(ctx.signal, RestKubeClient.fromEnvironment(kubeconfig), s.scn.namespace);
  const load = workload(w, s, ctx.flags);
  const { n, clients, closedLoop, request } = load;
  const wallFrom = Date.now();
  const batch = await (async () => {
    await watch.ready;
    log(`${w} / ${side}: ${n} requests, ${clients} clients${closedLoop ? ", one at a time" : ""}`);
    return runBatch({
      clients: connections(kubeconfig, clients),
      prefix: `${w}-${side}-${round_}`,
      n,
      tracker: watch.tracker,
      signal: ctx.signal,
      closedLoop,
      send: async (client, name, i, sample) => {
        const [type, params] = request(i);
        const rr = newRequest(s.scn.namespace, name, { [LABEL_RESOLVER_TYPE]: type }, params);
        await createWithRetry(client, rr, clientStats, ctx.signal);
        sample.created = performance.now();
      },
    });
  })().finally(() => watch.stop());
  const wallTo = Date.now();
  const figures = final();
  await started.stop();
  s.stopSide = undefined;
  // the audit log's last lines (requests finishing at the stop) land after it
  await sleep(1500);
  const ns = s.scn.namespace;
  const isSide = (user: string) =>
    side === "tekton"
      ? user.includes(":tekton-pipelines")
      : user.startsWith(`system:serviceaccount:${ns}:`) && user.includes("quarry-");
  const calls = readAudit(s.plane.cp.auditLog!, wallFrom, wallTo).filter((c) => isSide(c.user));
  const gitLog = s.git.log.slice(gitFrom);
  const regLog = s.registry.accessLog();
  const webLog = s.web.requests.slice(webFrom);
  const { samples } = batch;
  const done = samples.filter((x) => x.done !== undefined);
  const failed = samples.filter((x) => x.failed !== undefined && x.done === undefined);
  const latencyMs = (xs: typeof done) => {
    const l = summarize(xs.map((x) => x.done! - x.t0));
    return { p50: round(l.p50, 0), p90: round(l.p90, 0), p99: round(l.p99, 0), max: round(l.max, 0) };
  };
  const kindOf = "kind" in load ? load.kind : undefined;
  // a sample's request number ends its name (runBatch's `<prefix>-<i>`)
  const numberOf = (name: string) => Number(name.slice(name.lastIndexOf("-") + 1));
  const byKind = kindOf ? Object.groupBy(done, (x) => kindOf(numberOf(x.name))) : undefined;
  const wallSeconds = (batch.end - batch.start) / 1000;
  const r = {
    workload: w,
    side,
    /** Quarry's mode on a Quarry side */
    ...(MODE_OF_SIDE[side] ? { mode: MODE_OF_SIDE[side] } : {}),
    round: round_,
    requests: samples.length,
    completed: done.length,
    failed: failed.length,
    failures: [...new Set(failed.map((x) => x.failed ?? ""))].slice(0, 5),
    wallSeconds: round(wallSeconds, 2),
    throughputPerSecond: round(done.length / wallSeconds, 2),
    latencyMs: latencyMs(done),
    /** every API call the side's processes made in the window (audit log), and by kind */
    apiCalls: calls.length,
    apiCallsByKind: callsByClient(calls, () => side)[side] ?? {},
    gitRequests: gitLog.length,
    gitFetches: gitLog.filter((e) => e.command === "fetch").length,
    registryRequests: regLog.length,
    registryBlobGets: regLog.filter((e) => e.method === "GET" && e.path.includes("/blobs/")).length,
    httpRequests: webLog.length,
    /** the http workload's latency of its unpinned and pinned requests */
    ...(byKind
      ? {
          latencyByKindMs: Object.fromEntries(
            Object.entries(byKind).map(([k, xs]) => [k, latencyMs(xs ?? [])]),
          ),
        }
      : {}),
    ...figures,
    /** per request in order, ms (the large workload's plot) */
    perRequestMs: samples.map((x) => (x.done !== undefined ? round(x.done - x.t0, 0) : Number.NaN)),
  };
  await clearRequests(ctx, s);
  /** (seconds since the first create, completed): the plot's, not in the JSON */
  const ends = done.map((x) => round((x.done! - batch.start) / 1000, 3)).sort((a, b) => a - b);
  const completions = [[0, 0], ...ends.map((t, i) => [t, i + 1])] as [number, number][];
  return { run: r, completions };
}

type Measured = Awaited<ReturnType<typeof measure>>;
type RunResult = Measured["run"];

/** The figures compared: each side's median over the rounds. */
const FIGURES: Record<string, (r: RunResult) => number> = {
  completed: (r) => r.completed,
  "throughput (requests/s)": (r) => r.throughputPerSecond,
  "latency p50 (ms)": (r) => r.latencyMs.p50,
  "latency p99 (ms)": (r) => r.latencyMs.p99,
  "API requests": (r) => r.apiCalls,
  "git fetches (server)": (r) => r.gitFetches,
  "git HTTP requests": (r) => r.gitRequests,
  "registry requests": (r) => r.registryRequests,
  "HTTP requests (server)": (r) => r.httpRequests,
  "peak RSS, processes summed (MiB)": (r) => r.total.peakRssMiB,
  "peak PSS with git children (MiB)": (r) => r.total.treePeakMiB,
  "CPU, processes + children (s)": (r) => r.total.cpuSeconds,
};

/**
 * A workload's figures: per row, each side's median and Quarry ÷ Tekton. `quarry` and `ratio` are
 * the fleet's (all-in-one's when only it ran, as params.mode says); `allInOne` and `allInOneRatio`
 * the all-in-one process's when it ran.
 */
function figures(w: Workload, runs: readonly RunResult[], modes: readonly QuarryMode[]) {
  const of = (side: Side, get: (r: RunResult) => number) =>
    median(runs.filter((r) => r.workload === w && r.side === side).map(get));
  const ratioOf = (quarry: number, tekton: number) =>
    tekton > 0 && Number.isFinite(quarry) ? round(quarry / tekton, 2) : Number.NaN;
  const first = SIDE_OF_MODE[modes[0]!];
  return Object.fromEntries(
    Object.entries(FIGURES).map(([label, get]) => {
      const [tekton, quarry] = [of("tekton", get), of(first, get)];
      const row: {
        tekton: number;
        quarry: number;
        ratio: number;
        allInOne?: number;
        allInOneRatio?: number;
      } = {
        tekton,
        quarry,
        ratio: ratioOf(quarry, tekton),
      };
      if (modes.includes("all-in-one")) {
        row.allInOne = of("quarry-aio", get);
        row.allInOneRatio = ratioOf(row.allInOne, tekton);
      }
      return [label, row];
    }),
  );
}

const plotFile = (dir: string, w: Workload) => join(dir, `tekton-vs-quarry-${w}.png`);

/** Completions over time (mixed, burst, http) or latency per commit (large), one series per side's first round. */
function plot(w: Workload, measured: readonly Measured[], f: Ctx["flags"], sides: readonly Side[]): void {
  const n = { mixed: f.mixed, burst: f.burst, http: f.http, large: f["large-commits"] }[w];
  const series = sides.flatMap((side): PlotSeries[] => {
    const m = measured.find((x) => x.run.workload === w && x.run.side === side);
    const [name, color] = SIDE_STYLE[side];
    // beside the all-in-one process, the fleet is named as one
    const label = side === "quarry" && sides.includes("quarry-aio") ? "Quarry fleet" : name;
    if (!m) return [];
    if (w !== "large") return [{ label: `${label} (${m.run.completed}/${n})`, color, points: m.completions }];
    return [{ label, color, markers: true, points: m.run.perRequestMs.map((ms, i) => [i, ms]) }];
  });
  const commits = f["large-commits"];
  const large = {
    title: `One file from a ${f["large-mb"]} MB repository at ${commits} successive commits`,
    xLabel: "request (commit, oldest first)",
    yLabel: "latency (ms)",
    xNames: Array.from({ length: commits }, (_, i) => `main~${commits - 1 - i}`),
  };
  const completions = {
    title: {
      mixed: `${n} mixed requests (git branch/commit, bundle tag/digest, cluster): completions`,
      burst: `A burst of ${n} identical git requests: completions`,
      http: `${n} http requests (by URL, every other one pinned by digest): completions`,
      large: "",
    }[w],
    xLabel: "seconds since the first create",
    yLabel: "requests succeeded",
  };
  writePlotPng({ ...(w === "large" ? large : completions), series }, plotFile(f.plots, w));
}

/** Serves each [path, content] at /path on the fixture server; the contents' sha256 in hex. */
function serveFiles(web: HttpFixture, files: readonly string[][]): string[] {
  return files.map(([path, body]) => {
    web.route(`/${path}`, (_req, res) => res.writeHead(200, { "content-type": "text/yaml" }).end(body));
    return createHash("sha256").update(body!).digest("hex");
  });
}

/** The control plane with Tekton installed, the servers, the namespace, the repositories and bundles. */
async function setup(ctx: Ctx) {
  const f = ctx.flags;
  const versions = {
    ...controlPlaneVersions(),
    git: versionOf("git", ["--version"]),
    tekton: TEKTON_VERSION,
  };
  log("building (or finding) Tekton's controller and resolvers");
  const tektonDir = await buildTekton(ctx.signal);
  const mb = f["large-mb"] / 2;
  const large = f.workloads.includes("large")
    ? await cachedHistory("tekton-vs-quarry-v1", {
        ...{ treeMb: mb, historyMb: mb, fileKib: FILE_KIB },
        commits: Math.max(f["large-commits"], 100),
      })
    : undefined;
  const largeCache = large?.gitDir;

  const plane = await ctx.controlPlane({ auditLog: true, runCrds: "none" });
  const { admin } = plane;
  await installTektonPipelines(admin, tektonDir);
  await setTektonConfig(admin, "config-defaults", { "default-maximum-resolution-timeout": f.timeout });
  await installTektonResolvers(admin, {
    // as released but hub off: it is not measured and would reach for the internet
    "resolvers-feature-flags": { "enable-hub-resolver": "false", "enable-http-resolver": "true" },
    "git-resolver-config": { "fetch-timeout": "5m" },
    "http-resolver-config": { "fetch-timeout": HTTP_FETCH_TIMEOUT },
  });
  const git = await startGitServer();
  ctx.defer(() => git.stop());
  const registry = await startRegistry();
  ctx.defer(() => registry.dispose());
  ctx.run.track(childPids(process.pid, "registry")[0]);
  const web = await startHttpFixture();
  ctx.defer(() => web.close());

  const scn = await newScenario("bench-tvq", { cp: plane.info });
  ctx.defer(() => scn.cleanup());
  const ns = scn.namespace;
  // Tekton's bundle resolver reads the request namespace's default ServiceAccount (bundleresolver-config)
  await applyObject(admin, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "default", namespace: ns },
  });
  await setConfig(scn, "lifecycle-controller-config", { "default-maximum-resolution-timeout": f.timeout });
  await setConfig(scn, "git-resolver-config", { "fetch-timeout": "5m" });
  await setConfig(scn, "http-resolver-config", { "fetch-timeout": HTTP_FETCH_TIMEOUT });
  for (let j = 0; j < DEFS; j++) await applyObject(admin, taskManifest(ns, `task-${j}`));

  const defsDir = join(git.root, "defs.git");
  await initBare(defsDir);
  const defs = Array.from({ length: DEFS }, (_, j) => [`tasks/task-${j}.yaml`, taskYaml(`task-${j}`)]);
  const defsCommit = await commitFiles(defsDir, "main", Object.fromEntries(defs), "definitions", "");
  const httpDigests = serveFiles(web, defs);
  const largeCommits: string[] = [];
  if (largeCache) {
    const served = await serveShared(largeCache, git.root, "large.git");
    for (let i = f["large-commits"] - 1; i >= 0; i--)
      largeCommits.push(await revParse(served, `refs/heads/main~${i}`));
  }
  log(`pushing ${BUNDLES} bundles`);
  const bundles: { tag: string; digest: string }[] = [];
  for (let b = 0; b < BUNDLES; b++) {
    const tag = registry.ref(`bench/b-${b}:v1`);
    const { digest } = await tknBundlePush(tag, [taskYaml(`b-${b}`)]);
    bundles.push({ tag, digest: `${registry.host}/bench/b-${b}@${digest}` });
  }
  const logDir = mkdtempSync(join(tmpdir(), "quarry-tekton-vs-quarry-logs-"));
  log(`Tekton's logs: ${logDir}`);
  /** --as-image: Quarry's image trees, deployed at a side's first start */
  const imageDir = f["as-image"] ? mkdtempSync(join(tmpdir(), "bench-tvq-images-")) : undefined;
  if (imageDir) ctx.defer(() => rmSync(imageDir, { recursive: true, force: true }));
  const s = {
    versions,
    tektonDir,
    plane,
    git,
    registry,
    scn,
    defsUrl: git.url("defs.git"),
    defsCommit,
    largeUrl: git.url("large.git"),
    largeCommits,
    largeRepo: largeCache ? await repoSizes(largeCache) : undefined,
    bundles,
    web,
    webPort: Number(new URL(web.base).port),
    /** sha256 (hex) of the http workload's files, by number */
    httpDigests,
    /** Tekton's logs, kept after the run */
    logDir,
    imageDir,
    /** stops the side running now, if the run stops in a phase */
    stopSide: undefined as (() => Promise<void>) | undefined,
  };
  // the side running when the run stops goes before the scenario's cleanup
  ctx.defer(() => s.stopSide?.());
  return s;
}

await runBenchmark({
  name: "tekton-vs-quarry",
  about: "Tekton Pipelines' own resolvers side by side with Quarry's, on the same requests, taking turns.",
  deadline: 3600,
  flags: FLAGS,
  notes: "quick: --mixed 50 --burst 20 --large-mb 10 --large-commits 3 --http 40 --plots /tmp/plots",

  setup,

  phases: (ctx, s) => {
    const workloads = ctx.flags.workloads as Workload[];
    const sides = sidesOf(ctx.flags.mode);
    // two sides flip from one workload to the next; three turn, so each goes first in turn
    const turn = (k: number) =>
      sides.length === 2
        ? k % 2 === 0
          ? sides
          : [...sides].reverse()
        : sides.map((_, i) => sides[(i + k) % sides.length]!);
    const order = Array.from({ length: ctx.flags.rounds }, (_, r) =>
      workloads.flatMap((w, wi) => turn(r + wi).map((side) => ({ w, side, r }))),
    ).flat();
    return order.map(({ w, side, r }, runNo) => ({
      name: `${w}-${side}-${r}`,
      run: () => measure(ctx, s, w, side, r, runNo),
    }));
  },

  result(ctx, s, measured) {
    const f = ctx.flags;
    const workloads = f.workloads as Workload[];
    const runs = measured.map((m) => m.run);
    const modes = modesOf(f.mode);
    if (f.plots) {
      mkdirSync(f.plots, { recursive: true });
      for (const w of workloads) plot(w, measured, f, sidesOf(f.mode));
    }
    return {
      benchmark: "tekton-vs-quarry",
      date: new Date().toISOString(),
      machine: machineInfo(s.versions),
      params: { ...flagParams(f), burstClients: BURST_CLIENTS, largeRepo: s.largeRepo },
      figures: Object.fromEntries(workloads.map((w) => [w, figures(w, runs, modes)])),
      runs,
      seconds: round((performance.now() - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx) {
    const workloads = Object.keys(r.figures) as Workload[];
    const modes = modesOf(ctx.flags.mode);
    const ratios = workloads.flatMap((w) => {
      const row = (name: string) => r.figures[w]![name]!;
      const label = (m: QuarryMode) => (modes.length > 1 ? `${w} (${m})` : w);
      return [
        [label(modes[0]!), (name: string) => row(name).ratio] as const,
        ...(modes.length > 1
          ? [[label("all-in-one"), (name: string) => row(name).allInOneRatio ?? Number.NaN] as const]
          : []),
      ];
    });
    const md = columns([["Quarry ÷ Tekton", (row: string) => row], ...ratios], Object.keys(FIGURES));
    const processes = r.runs.map((x): ValueRow => {
      const byName = Object.fromEntries(x.processes.map(({ name, pid, ...p }) => [name, p]));
      return [
        `${x.workload}, ${x.side} round ${x.round + 1}`,
        { ...byName, failures: x.failures.join(" | ") || undefined },
      ];
    });
    const plots = ctx.flags.plots ? workloads.map((w) => plotFile(ctx.flags.plots, w)).join(", ") : undefined;
    const quarry = modes
      .map((m) =>
        m === "fleet"
          ? "Quarry's fleet (lifecycle-controller + git/bundle/cluster resolvers; http: + http resolver only)"
          : "Quarry all-in-one (those components in one process)",
      )
      .join(" and ");
    const form = ctx.flags["as-image"] ? "as its images run it" : "from the sources";
    const sides = `Tekton ${TEKTON_VERSION} (controller + resolvers) vs ${quarry}, ${form}`;
    const spec: ValueRow[] = [
      ["sides", `${sides}; medians over ${ctx.flags.rounds} run(s) per side; ratios are Quarry/Tekton`],
      ...Object.entries(r.figures),
      ...processes,
      ["plots", plots],
    ];
    return valueReport(spec, md.header, md.rows);
  },

  ok: (r) => r.runs.every((x) => x.completed === x.requests),
});
