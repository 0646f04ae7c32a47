// Benchmark: the git resolver through the real service. A private control
// plane with Quarry's API, the fixture smart-HTTP git server (in this process)
// serving a generated repository, and the real lifecycle-controller and
// git-resolver processes under their shipped RBAC (git-resolver-config allows
// the fixture server's URLs). --concurrency clients create --requests
// ResolutionRequests of type `git` per phase; latency = Succeeded=True seen on
// a watch − just before the create was sent. Phases, in this order, on one
// resolver process and one on-disk cache:
//
//   cold        a fresh, empty cache: request i reads tasks/t-<i>.yaml at `main`
//               (C1), every request a different file: one fetch of C1's trees
//               (the first requests wait for it), then one blob fetched per request
//   new-commit  a commit C2 is pushed to main that changes --changed of those
//               files; the same requests again, by branch: the cache holds the
//               repository and C1, not C2: one fetch of C2's new trees, --changed
//               blobs fetched, the others read from disk
//   hot         the same requests again (main is still C2): everything is cached
//   hot-pinned  the same, with revision = C2's id instead of `main`: no ref lookup
//   hot-sdk     the same as hot with cache=always: the SDK's result cache answers
//               (filled by --requests unmeasured requests first)
//
// Every phase but hot-sdk sets cache=never on its requests, so the SDK's result
// cache stays out and the git engine's own caching is what is measured.
// Warm-up requests (JIT, connections) read another, small repository, so they
// never warm the measured one. Requests of a phase are deleted before the next.
// With --floor (the default) the lifecycle floor runs first on the same control
// plane for a same-run comparison, and again just before every other phase
// (--no-floor-each: only first): on a shared or throttled machine the speed of
// every process drifts by up to half within minutes, and a phase compared with
// a floor measured minutes earlier inherits that drift.
//
//   node bench/git-resolver.ts [--requests 1000] [--concurrency 16] [--no-floor] [--json out.json]
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { buildBinaries, type ControlPlane } from "@quarry/devcluster/controlplane";
import type { GitServer } from "@quarry/devcluster/git-server";
import { startGitServer } from "@quarry/devcluster/git-server";
import { errorMessage, type KubeClient, settingsFromEnv } from "@quarry/kube";
import { newScenario } from "../e2e/harness/scenario.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { loadOptions, loadSizes, selectPhases } from "./lib/flags.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import { dirBytes, GitTimeShim, reapedChildrenCpuSeconds, TreeRssSampler } from "./lib/git-procs.ts";
import { bulkPath, commitFiles, taskYaml } from "./lib/git-repo.ts";
import { gitSuccessStatus } from "./lib/git-status.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import {
  apiCallRows,
  emitResult,
  type FloorRun,
  floorJson,
  floorMarkdownRow,
  floorRows,
  latencyRows,
  overFloorRows,
  perRequest,
  phaseJson,
  serviceRows,
} from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { calls, machineInfo, ms, versionOf } from "./lib/report.ts";
import { createWithRetry, deleteRequests, type Sample } from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { BoundedRun, intFlag, log, sleep } from "./lib/run.ts";
import { BenchServices, logWarnings, MiB } from "./lib/service-stats.ts";
import { round, roundSummary, type Summary, summarize, table } from "./lib/stats.ts";
import { buildGitWorkload, configureGitNamespace, gitRequest, gitServerRequests } from "./lib/workloads.ts";

const PHASES = ["cold", "new-commit", "hot", "hot-pinned", "hot-sdk"] as const;
type PhaseName = (typeof PHASES)[number];

const USAGE = `usage: node bench/git-resolver.ts [options]
  --requests N      measured requests per phase (default 1000)
  --concurrency N   in-flight clients creating requests (default 16)
  --files N         Task files in the repository; request i reads file i mod N (default: --requests,
                    so every request of a phase reads a different file)
  --bulk-mb N       other content in the repository's tree, in 16 KiB files (default 32)
  --changed N       files among the requested ones that the new commit changes (default 10)
  --phases LIST     comma-separated subset of ${PHASES.join(",")} (default all, always in that order)
  --warmup N        warm-up requests per phase, against a separate small repository (default 20; 0 disables)
  --no-floor        skip the same-run lifecycle floor (compare with docs/performance.md only)
  --floor-shape S   floor (default): the floor's requests have no params and a small status.data;
                    git: they have the git phases' params and the status the git resolver writes,
                    so the floor pays the same API cost per request as a git request would
  --no-floor-each   run the floor once, first, instead of just before every phase (each phase is
                    then compared with the first floor only; the machine's speed can drift between)
  --lifecycle-timeout D  the git namespace's lifecycle-controller default-maximum-resolution-timeout
                    (default 10m, so a backlog is measured rather than cut off; Tekton's and Quarry's default is 1m)
  --git-config K=V  set key K of git-resolver-config to V (repeatable), e.g. ref-lookup-interval=0
  --cpu-prof DIR    write a CPU profile of the git-resolver process to DIR (node --cpu-prof)
  --git-rss         run the resolver's git under /usr/bin/time to record every git process's peak RSS
                    (adds a shell and a time process per git call)
  --tree-sample-ms N  how often the resolver's process tree (PSS, git children) is sampled (default 250;
                    each sample costs this process ~6 ms of CPU, which the floor does not pay)
  --closed-loop     each client waits for its request to finish (or fail) before sending the next:
                    with --concurrency 1, the unloaded latency of each phase (also for the floor)
  --deadline S      the whole run stops after S seconds, torn down either way (default 900)
  --log-level L     the services' LOG_LEVEL (default info)
  --json FILE       also write the JSON result to FILE
  --samples FILE    write every measured request's timeline (ms since its phase's first create) as CSV
The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).`;

const { values: flags } = parseArgs({
  allowNegative: true,
  options: {
    ...loadOptions({ requests: "1000", deadline: "900" }),
    files: { type: "string" },
    "bulk-mb": { type: "string", default: "32" },
    changed: { type: "string", default: "10" },
    phases: { type: "string", default: PHASES.join(",") },
    floor: { type: "boolean", default: true },
    "floor-each": { type: "boolean", default: true },
    "floor-shape": { type: "string", default: "floor" },
    "git-rss": { type: "boolean", default: false },
    "tree-sample-ms": { type: "string", default: "250" },
    "lifecycle-timeout": { type: "string", default: "10m" },
    "cpu-prof": { type: "string" },
    "git-config": { type: "string", multiple: true, default: [] },
    "closed-loop": { type: "boolean", default: false },
  },
});
const sizes = loadSizes(flags, USAGE);
const TREE_SAMPLE_MS = Number(flags["tree-sample-ms"]);
if (!Number.isInteger(TREE_SAMPLE_MS) || TREE_SAMPLE_MS < 10) {
  console.error(`--tree-sample-ms must be an integer of at least 10\n${USAGE}`);
  process.exit(2);
}
const N = sizes.requests;
const CONCURRENCY = sizes.concurrency;
const WARMUP = sizes.warmup;
const DEADLINE_S = sizes.deadlineSeconds;
const FILES = intFlag("files", flags.files ?? String(N), 1, USAGE);
const BULK_MB = intFlag("bulk-mb", flags["bulk-mb"], 0, USAGE);
const CHANGED = Math.min(FILES, intFlag("changed", flags.changed, 0, USAGE));
const LOG_LEVEL = flags["log-level"];
const WITH_FLOOR = flags.floor;
const FLOOR_EACH = WITH_FLOOR && flags["floor-each"];
const FLOOR_SHAPE = flags["floor-shape"];
if (FLOOR_SHAPE !== "floor" && FLOOR_SHAPE !== "git") {
  console.error(`--floor-shape must be floor or git, got "${FLOOR_SHAPE}"\n${USAGE}`);
  process.exit(2);
}
const phaseNames = selectPhases(flags.phases, PHASES, USAGE);

/** Files the new commit changes: spread evenly over the requested ones. */
const changedFiles = (): number[] =>
  Array.from({ length: CHANGED }, (_, k) => Math.floor((k * Math.min(N, FILES)) / Math.max(1, CHANGED)));

// ---- the run ----

const run = new BoundedRun(DEADLINE_S);
const runStart = performance.now();
let cp: ControlPlane | undefined;
let server: GitServer | undefined;
let shim: GitTimeShim | undefined;
const services = new BenchServices(run, LOG_LEVEL);
const cacheDir = mkdtempSync(join(tmpdir(), "quarry-bench-git-cache-"));
let exitCode = 1;

/** A phase against the floor measured just before it: throughput ratio, and that floor's own figures. */
function adjacentFloorJson(p: PhaseResult, f: FloorRun | undefined) {
  if (!f) return undefined;
  const fp = f.phase;
  return {
    throughputPerSecond: fp.throughputPerSecond,
    wallSeconds: fp.wallSeconds,
    cpuMsPerRequest: round((fp.cpu.machine * 1000) / Math.max(1, fp.completed), 1),
    throughputRatio: round(p.throughputPerSecond / fp.throughputPerSecond, 2),
  };
}

/** --git-config K=V flags as ConfigMap data. */
function gitConfigFlags(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      console.error(`--git-config ${JSON.stringify(pair)}: expected KEY=VALUE\n${USAGE}`);
      process.exit(2);
    }
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** With --closed-loop: waits until the watch has seen the request finish (the client's next create waits). */
async function untilSettled(s: Sample, signal: AbortSignal): Promise<void> {
  if (!flags["closed-loop"]) return;
  while (s.done === undefined && s.failed === undefined && !signal.aborted) await sleep(2);
}

interface GitPhase {
  name: PhaseName;
  phase: PhaseResult;
  /** The floor measured just before this phase (--floor-each; the first phase's is the run's first floor). */
  adjacentFloor: FloorRun | undefined;
  definition: string;
  /** latency of the first --concurrency requests sent (those that can have waited for a fetch) */
  firstLatencyMs: Summary;
  resolverVmHwmMiB: number;
  tree: { maxTreeMiB: number; maxGitProcessMiB: number; gitProcessesSeen: number; samples: number };
  gitProcesses?: { count: number; maxRssMiB: number; largest: string; byCommand: Record<string, number> };
  cpu: { resolverGitChildren: number; gitServer: number; foreignNet: number };
  server: { requests: number; byKind: Record<string, number> };
  gitOps: Record<string, number>;
  cacheBytes: number;
  /** what the resolver's quarry_git_cache_bytes said after the phase */
  cacheBytesMetric: number;
}

try {
  const binDir = buildBinaries();
  const versions = {
    node: process.version,
    git: versionOf("git", ["--version"]),
    kubeApiserver: versionOf(join(binDir, "kube-apiserver"), ["--version"]),
    etcd: versionOf(join(binDir, "etcd"), ["--version"]),
  };

  // ---- the git server and its repositories ----
  const gitServer = await startGitServer();
  server = gitServer;
  const workload = await buildGitWorkload(gitServer, { files: FILES, bulkMb: BULK_MB });
  const { bare, c1, bulkFiles, url, taskPath } = workload;

  // ---- the control plane ----
  const {
    cp: plane,
    pids: cpPids,
    info,
    admin,
  } = await startBenchControlPlane(run, (started) => {
    cp = started;
  });
  const clientStats = { retries: 0 };

  // ---- optional: the floor, first, in its own namespace with its own lifecycle-controller ----
  const measureFloor = () =>
    runSameRunFloor({
      info,
      cp: plane,
      pids: cpPids,
      start: services.start,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      requests: N,
      signal: run.signal,
      clientStats,
      wrap: (send) => async (client, name, i, s) => {
        await send(client, name, i, s);
        await untilSettled(s, run.signal);
      },
      shape:
        FLOOR_SHAPE === "git"
          ? (i) => ({
              params: { url, revision: "main", pathInRepo: taskPath(i), cache: "never" },
              status: gitSuccessStatus(url, c1, taskPath(i), taskYaml(`t-${i}`, "v1")),
            })
          : undefined,
    });
  const floor: FloorRun | undefined = WITH_FLOOR ? await measureFloor() : undefined;

  // ---- the git resolver ----
  const scn = await newScenario("bench-git", { cp: info });
  await configureGitNamespace(
    scn,
    gitServer,
    flags["lifecycle-timeout"],
    gitConfigFlags(flags["git-config"]),
  );
  const lc = await services.start(scn, "lifecycle-controller");
  if (flags["git-rss"]) shim = new GitTimeShim();
  const cpuProf = flags["cpu-prof"];
  const resolver = await services.start(scn, "git-resolver", {
    QUARRY_GIT_CACHE_DIR: cacheDir,
    ...(shim ? { PATH: shim.path() } : {}),
    ...(cpuProf
      ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${cpuProf}`.trim() }
      : {}),
  });
  shim?.take(); // the version check at start

  const results: GitPhase[] = [];
  let head = c1;
  for (const name of phaseNames) {
    if (run.signal.aborted) break;
    // the machine's speed drifts by up to half within minutes (docs/performance.md): each phase is
    // also compared with a floor measured just before it
    const adjacentFloor = FLOOR_EACH && results.length > 0 ? await measureFloor() : floor;
    let definition: string;
    let revision = (): string => "main";
    let cache = "never";
    let warmup = WARMUP;
    let warmToMeasured = false;
    switch (name) {
      case "cold":
        definition = `fresh cache; tasks/t-<i>.yaml at main (${c1.slice(0, 8)})`;
        break;
      case "new-commit": {
        const files: Record<string, string> = { [bulkPath("bulk", 0)]: `changed at ${Date.now()}\n` };
        for (const i of changedFiles()) files[taskPath(i)] = taskYaml(`t-${i}`, "v2");
        head = await commitFiles(bare, "main", files, "new commit");
        definition = `main moved to ${head.slice(0, 8)} (${CHANGED} requested files changed); same files by branch`;
        break;
      }
      case "hot":
        definition = `same files at main (${head.slice(0, 8)}), all cached`;
        break;
      case "hot-pinned":
        definition = `same files at revision ${head.slice(0, 8)}… (commit id: no ref lookup)`;
        revision = () => head;
        break;
      case "hot-sdk":
        definition = `same files at main, cache=always: the SDK's result cache (${N} unmeasured requests fill it)`;
        cache = "always";
        warmup = N;
        warmToMeasured = true;
        break;
    }
    // Counted from the first measured create on (the warm-up has settled by then): the server's
    // log, the CPU of reaped git processes (resolver's and server's), the process tree's memory.
    let window:
      | { serverLogAt: number; gitCpu0: number; serverCpu0: number; tree: TreeRssSampler }
      | undefined;
    const send = async (client: KubeClient, reqName: string, i: number, s: Sample) => {
      if (!reqName.startsWith("warm-") && window === undefined) {
        shim?.take();
        window = {
          serverLogAt: gitServer.log.length,
          gitCpu0: reapedChildrenCpuSeconds(resolver.svc.pid),
          serverCpu0: reapedChildrenCpuSeconds(process.pid),
          tree: new TreeRssSampler(resolver.svc.pid, TREE_SAMPLE_MS),
        };
      }
      const warm = reqName.startsWith("warm-") && !warmToMeasured;
      await createWithRetry(
        client,
        gitRequest(workload, scn.namespace, reqName, i, { revision: revision(), cache, warm }),
        clientStats,
        run.signal,
      );
      s.created = performance.now();
      await untilSettled(s, run.signal);
    };

    const phase = await runPhase({
      name,
      cp: plane,
      namespace: scn.namespace,
      services: [lc.svc, resolver.svc],
      pids: cpPids,
      concurrency: CONCURRENCY,
      warmup,
      requests: N,
      signal: run.signal,
      send,
      resources: ["resolutionrequests", "events"],
    });
    const w = window ?? {
      serverLogAt: gitServer.log.length,
      gitCpu0: reapedChildrenCpuSeconds(resolver.svc.pid),
      serverCpu0: reapedChildrenCpuSeconds(process.pid),
      tree: new TreeRssSampler(resolver.svc.pid, TREE_SAMPLE_MS),
    };
    const tree = w.tree;
    tree.stop();
    const gitCpu = reapedChildrenCpuSeconds(resolver.svc.pid) - w.gitCpu0;
    const serverCpu = reapedChildrenCpuSeconds(process.pid) - w.serverCpu0;
    const procs = shim?.take();
    const measured = gitServer.log.slice(w.serverLogAt);
    const byKind = gitServerRequests(measured);
    const first = [...phase.batch.samples]
      .sort((a, b) => a.t0 - b.t0)
      .slice(0, CONCURRENCY)
      .flatMap((s) => (s.done !== undefined ? [s.done - s.t0] : []));
    const gitOps: Record<string, number> = {};
    for (const op of ["fetch", "blob", "memory_hit", "access_check", "eviction"]) {
      gitOps[op] = metricDelta(phase, "git-resolver", "quarry_git_operations_total", { operation: op });
    }
    const byCommand: Record<string, number> = {};
    for (const p of procs ?? []) {
      const cmd = p.command.split(" ")[0] ?? "?";
      byCommand[cmd] = (byCommand[cmd] ?? 0) + 1;
    }
    const largest = (procs ?? []).reduce<{ maxRssKiB: number; command: string } | undefined>(
      (a, b) => (a === undefined || b.maxRssKiB > a.maxRssKiB ? b : a),
      undefined,
    );
    results.push({
      name,
      phase,
      adjacentFloor,
      definition,
      firstLatencyMs: roundSummary(summarize(first)),
      resolverVmHwmMiB: MiB(vmKiB(resolver.svc.pid, "VmHWM")),
      tree: {
        maxTreeMiB: MiB(tree.maxTreeKiB),
        maxGitProcessMiB: MiB(tree.maxGitKiB),
        gitProcessesSeen: tree.descendantsSeen,
        samples: tree.samples,
      },
      ...(procs
        ? {
            gitProcesses: {
              count: procs.length,
              maxRssMiB: MiB(largest?.maxRssKiB),
              largest: largest?.command ?? "",
              byCommand,
            },
          }
        : {}),
      cpu: {
        resolverGitChildren: round(gitCpu, 2),
        gitServer: round(serverCpu, 2),
        foreignNet: round(phase.cpu.foreign - gitCpu - serverCpu, 2),
      },
      server: { requests: measured.length, byKind },
      gitOps,
      cacheBytes: dirBytes(cacheDir),
      cacheBytesMetric: promSum(phase.services["git-resolver"]?.metricsAfter ?? "", "quarry_git_cache_bytes"),
    });
    log(
      `${name}: p50 ${phase.latencyMs.p50} ms, p99 ${phase.latencyMs.p99} ms, ${phase.throughputPerSecond} requests/s (${phase.completed}/${N})`,
    );
    await deleteRequests(
      admin,
      scn.namespace,
      [
        ...Array.from({ length: warmup }, (_, i) => `warm-${String(i).padStart(5, "0")}`),
        ...phase.batch.samples.map((s) => s.name),
      ],
      run.signal,
    );
    await sleep(1000);
    if (phase.completed < N) break;
  }
  const controllers = {
    "lifecycle-controller": await lc.stats.final(),
    "git-resolver": await resolver.stats.final(),
  };
  const resolverWarnings = logWarnings(resolver.svc);
  run.finish();

  // ---- report ----
  const documented = documentedFloor();
  const phasesJson = results.map((r) => {
    const p = r.phase;
    return {
      name: r.name,
      definition: r.definition,
      ...phaseJson(p, floor, documented),
      firstRequestsLatencyMs: r.firstLatencyMs,
      resolver: {
        ...resolverView(p, "git-resolver", "git"),
        gitOps: r.gitOps,
        vmHwmAfterMiB: r.resolverVmHwmMiB,
        processTree: r.tree,
        gitProcesses: r.gitProcesses,
        cacheBytesAfter: r.cacheBytes,
        cacheBytesMetricAfter: r.cacheBytesMetric,
      },
      gitServer: r.server,
      adjacentFloor: adjacentFloorJson(p, r.adjacentFloor),
      cpuSecondsMeasured: { ...p.cpu, ...r.cpu },
      cpuMsPerRequest: {
        resolver: perRequest(p.cpu.processes["git-resolver"] ?? 0, p),
        resolverGit: perRequest(r.cpu.resolverGitChildren, p),
        gitServer: perRequest(r.cpu.gitServer, p),
        lifecycleController: perRequest(p.cpu.processes["lifecycle-controller"] ?? 0, p),
        kubeApiserver: perRequest(p.cpu.processes["kube-apiserver"] ?? 0, p),
        all: perRequest(
          Object.values(p.cpu.processes).reduce((a, b) => a + b, 0) +
            p.cpu.benchDriver +
            r.cpu.resolverGitChildren +
            r.cpu.gitServer,
          p,
        ),
      },
    };
  });
  const result = {
    benchmark: "git-resolver",
    date: new Date().toISOString(),
    params: {
      requests: N,
      concurrency: CONCURRENCY,
      files: FILES,
      bulkMb: BULK_MB,
      changed: CHANGED,
      warmup: WARMUP,
      phases: phaseNames,
      withFloor: WITH_FLOOR,
      floorEach: FLOOR_EACH,
      floorShape: FLOOR_SHAPE,
      gitRss: flags["git-rss"],
      treeSampleMs: TREE_SAMPLE_MS,
      lifecycleTimeout: flags["lifecycle-timeout"],
      gitConfig: gitConfigFlags(flags["git-config"]),
      closedLoop: flags["closed-loop"],
      logLevel: LOG_LEVEL,
      controllerConcurrency: process.env.QUARRY_CONCURRENCY ?? `${settingsFromEnv({}).concurrency} (default)`,
    },
    repository: { url, c1, head, taskFiles: FILES, bulkFiles, bulkBytes: bulkFiles * 16 * 1024 },
    aborted: run.signal.aborted ? errorMessage(run.signal.reason) : undefined,
    phases: phasesJson,
    controllers,
    resolverWarnings,
    floor: floorJson(floor),
    documentedFloor: documented instanceof Error ? { error: documented.message } : documented,
    machine: machineInfo(versions),
    setupSeconds: round(((results[0]?.phase.batch.start ?? performance.now()) - runStart) / 1000, 1),
  };

  const rows: [string, string][] = [];
  for (const [k, r] of results.entries()) {
    const p = r.phase;
    const j = phasesJson[k]!;
    const rv = j.resolver;
    const c = j.cpuMsPerRequest;
    rows.push(
      [`${r.name}`, r.definition],
      ...latencyRows(p, N),
      [`    first ${CONCURRENCY} sent`, ms(r.firstLatencyMs)],
      [
        "  resolver, in process",
        `picked up → outcome written: mean ${rv.meanMs} ms, p50 ≈ ${rv.p50Ms} ms, p90 ≈ ${rv.p90Ms} ms; outcomes ${JSON.stringify(rv.outcomes)}; SDK cache ${JSON.stringify(rv.cache)}`,
      ],
      [
        "  git engine",
        `${calls(r.gitOps)}; cache on disk ${round(r.cacheBytes / 1e6, 2)} MB after (quarry_git_cache_bytes says ${round(r.cacheBytesMetric / 1e6, 2)} MB)`,
      ],
      [
        "  git server",
        `${r.server.requests} HTTP requests (${round(r.server.requests / Math.max(1, p.completed), 2)}/request): ${calls(r.server.byKind)}`,
      ],
      ["  wall time / throughput", `${p.wallSeconds} s, ${p.throughputPerSecond} requests/s`],
      [
        "  git-resolver memory",
        `VmHWM ${r.resolverVmHwmMiB} MiB after the phase; resolver + its children sampled max ${r.tree.maxTreeMiB} MiB (PSS), largest git process sampled ${r.tree.maxGitProcessMiB} MiB RSS (${r.tree.gitProcessesSeen} children seen, every ${TREE_SAMPLE_MS} ms)`,
      ],
      ...(r.gitProcesses
        ? [
            [
              "  git processes (time)",
              r.gitProcesses.count
                ? `${r.gitProcesses.count}: ${calls(r.gitProcesses.byCommand)}; largest ${r.gitProcesses.maxRssMiB} MiB (${r.gitProcesses.largest})`
                : "none",
            ] as [string, string],
          ]
        : []),
      [
        "  CPU in measured phase",
        `git-resolver ${p.cpu.processes["git-resolver"]} s + its git ${r.cpu.resolverGitChildren} s, git server ${r.cpu.gitServer} s, lifecycle-controller ${p.cpu.processes["lifecycle-controller"]} s, kube-apiserver ${p.cpu.processes["kube-apiserver"]} s, etcd ${p.cpu.processes.etcd} s, driver ${p.cpu.benchDriver} s; machine ${p.cpu.machine} s of ${round(p.wallSeconds * cpus().length, 2)} s, foreign ${r.cpu.foreignNet} s`,
      ],
      [
        "  CPU ms per request",
        `resolver ${c.resolver} + its git ${c.resolverGit}, git server ${c.gitServer}, lifecycle ${c.lifecycleController}, apiserver ${c.kubeApiserver}; all ${c.all}`,
      ],
      ...apiCallRows(p),
    );
    rows.push(...overFloorRows(j));
    if (FLOOR_EACH && j.adjacentFloor) {
      const a = j.adjacentFloor;
      rows.push([
        "  over the floor just before it",
        `throughput ×${a.throughputRatio} (floor ${a.throughputPerSecond} requests/s, ${a.cpuMsPerRequest} ms of CPU per request)`,
      ]);
    }
  }
  rows.push(...floorRows(floor, N, CONCURRENCY, WARMUP));
  rows.push(
    ...serviceRows("git-resolver", controllers, resolverWarnings),
    [
      "machine",
      `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}, ${versions.git}`,
    ],
    ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
  );
  console.log(`\n${table(rows)}\n`);
  // one line per phase, markdown, for docs/performance.md
  console.log(
    "| phase | p50 ms | p90 ms | p99 ms | max ms | req/s | resolver in-process mean ms | over floor p50 ms | git server req/request | CPU ms/request (resolver + git / server / all) | ÷ floor just before |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const line of floorMarkdownRow(floor, 11)) console.log(line);
  for (const j of phasesJson) {
    const l = j.latencyMs;
    const over = j.overFloor.sameRun?.latencyMs.p50 ?? "";
    const c = j.cpuMsPerRequest;
    console.log(
      `| ${j.name} | ${l.p50} | ${l.p90} | ${l.p99} | ${l.max} | ${j.throughputPerSecond} | ${j.resolver.meanMs} | ${over} | ${round(j.gitServer.requests / Math.max(1, j.completed), 1)} | ${round(c.resolver + c.resolverGit, 1)} / ${c.gitServer} / ${c.all} | ${j.adjacentFloor ? `${j.adjacentFloor.throughputRatio} (${j.adjacentFloor.throughputPerSecond}/s)` : ""} |`,
    );
  }
  exitCode = emitResult(result, {
    json: flags.json,
    samples: flags.samples,
    floor,
    phases: results,
    expectedPhases: phaseNames.length,
    requests: N,
  });
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 1;
} finally {
  run.finish();
  await services.stopAll();
  await cp?.stop();
  await server?.stop();
  shim?.dispose();
  rmSync(cacheDir, { recursive: true, force: true });
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
