// Benchmark: the git resolver through the real service. A private control
// plane with Quarry's API, the fixture smart-HTTP git server (in this process)
// serving a generated repository, and the real lifecycle-controller and
// git-resolver processes under their shipped RBAC. Phases, in this order, on
// one resolver process and one on-disk cache:
//
//   cold        a fresh, empty cache: request i reads tasks/t-<i>.yaml at `main` (C1)
//   new-commit  C2 is pushed to main, changing --changed of those files; the same requests again
//   hot         the same requests again (main is still C2): everything is cached
//   hot-pinned  the same, with revision = C2's id instead of `main`: no ref lookup
//   hot-sdk     the same as hot with cache=always: the SDK's result cache answers
//
// Every phase but hot-sdk sets cache=never, so the git engine's own caching is
// what is measured. Warm-ups read another, small repository. With the floor
// (default) the lifecycle floor runs first, and again just before every other
// phase (--no-floor-each: only first): the machine's speed drifts by up to
// half within minutes, and a phase compared with a floor measured minutes
// earlier inherits that drift.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startGitServer } from "@quarry/devcluster/git-server";
import { newScenario } from "@quarry/harness/scenario";
import type { KubeClient } from "@quarry/kube";
import { FlagError, loadFlags, once, type Phase, runBenchmark } from "./lib/benchmark.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import { dirBytes, GitTimeShim, reapedChildrenCpuSeconds, TreeRssSampler } from "./lib/git-procs.ts";
import { bulkPath, commitFiles, taskYaml } from "./lib/git-repo.ts";
import { gitSuccessStatus } from "./lib/git-status.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import * as phaseReport from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import {
  controllerConcurrency,
  controlPlaneVersions,
  machineInfo,
  machineRows,
  versionOf,
} from "./lib/report.ts";
import { createWithRetry, type Sample } from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { log, sleep } from "./lib/run.ts";
import { logWarnings, MiB } from "./lib/service-stats.ts";
import { calls, ms, type Row, round, roundSummary, type Summary, summarize } from "./lib/stats.ts";
import { buildGitWorkload, configureGitNamespace, gitRequest, gitServerRequests } from "./lib/workloads.ts";

const PHASES = ["cold", "new-commit", "hot", "hot-pinned", "hot-sdk"] as const;
type PhaseName = (typeof PHASES)[number];

interface GitPhase {
  name: PhaseName;
  phase: PhaseResult;
  /** the floor measured just before this phase (--floor-each; the first phase's is the run's first floor) */
  adjacentFloor: phaseReport.FloorRun | undefined;
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

/** A phase's result: a floor's, or a git phase's. */
interface Step {
  floor?: phaseReport.FloorRun;
  git?: GitPhase;
}

/** --git-config K=V flags as ConfigMap data. */
function gitConfig(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new FlagError(`--git-config ${JSON.stringify(pair)}: expected KEY=VALUE`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** A phase against the floor measured just before it: throughput ratio, and that floor's own figures. */
function adjacentFloorJson(p: PhaseResult, f: phaseReport.FloorRun | undefined) {
  if (!f) return undefined;
  const fp = f.phase;
  return {
    throughputPerSecond: fp.throughputPerSecond,
    wallSeconds: fp.wallSeconds,
    cpuMsPerRequest: round((fp.cpu.machine * 1000) / Math.max(1, fp.completed), 1),
    throughputRatio: round(p.throughputPerSecond / fp.throughputPerSecond, 2),
  };
}

const gitPhases = (steps: readonly Step[]) => steps.flatMap((s) => (s.git ? [s.git] : []));

const ending = phaseReport.floorThenPhases<Step>(gitPhases);

await runBenchmark({
  name: "git-resolver",
  about:
    "The git resolver through the service: cold, new-commit, hot, hot-pinned and hot-sdk phases, each after a floor.",
  deadline: 900,
  flags: {
    ...loadFlags(1000, "measured requests per phase"),
    files: {
      type: "int",
      min: 1,
      help: "Task files in the repository (default: --requests, every request of a phase a different file)",
    },
    "bulk-mb": { type: "int", default: 32, min: 0, help: "other content in the tree, in 16 KiB files" },
    changed: { type: "int", default: 10, min: 0, help: "requested files the new commit changes" },
    ...phaseReport.phaseFlags(PHASES),
    "floor-each": { type: "boolean", default: true, help: "run the floor only before the first phase" },
    "floor-shape": {
      type: "string",
      default: "floor",
      choices: ["floor", "git"],
      help: "git: the floor's requests carry the git phases' params and the status the git resolver writes",
    },
    "git-config": {
      type: "multiple",
      arg: "K=V",
      help: "set a key of git-resolver-config (repeatable), e.g. ref-lookup-interval=0",
    },
    "closed-loop": {
      type: "boolean",
      help: "each client waits for its request to finish before the next (the floor's too)",
    },
    "lifecycle-timeout": {
      type: "string",
      default: "10m",
      arg: "D",
      help: "the git namespace's default-maximum-resolution-timeout",
    },
    "git-rss": {
      type: "boolean",
      help: "run the resolver's git under /usr/bin/time (every git process's peak RSS)",
    },
    "tree-sample-ms": {
      type: "int",
      default: 250,
      min: 10,
      help: "how often the resolver's process tree is sampled (each sample costs ~6 ms of CPU)",
    },
    "cpu-prof": { type: "string", arg: "DIR", help: "node --cpu-prof for the git-resolver process" },
  },
  notes: "The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).",

  async setup(ctx) {
    const f = ctx.flags;
    const configured = gitConfig(f["git-config"]);
    const files = f.files ?? f.requests;
    const versions = { ...controlPlaneVersions(), git: versionOf("git", ["--version"]) };
    const server = await startGitServer();
    ctx.defer(() => server.stop());
    const cacheDir = mkdtempSync(join(tmpdir(), "quarry-bench-git-cache-"));
    ctx.defer(() => rmSync(cacheDir, { recursive: true, force: true }));
    const workload = await buildGitWorkload(server, { files, bulkMb: f["bulk-mb"] });
    const plane = await ctx.controlPlane();
    const shim = f["git-rss"] ? new GitTimeShim() : undefined;
    if (shim) ctx.defer(() => shim.dispose());
    const resolverUp = once(async () => {
      const scn = await newScenario("bench-git", { cp: plane.info });
      await configureGitNamespace(scn, server, f["lifecycle-timeout"], configured);
      const lc = await ctx.services.start(scn, "lifecycle-controller");
      const prof = f["cpu-prof"];
      const resolver = await ctx.services.start(scn, "git-resolver", {
        QUARRY_GIT_CACHE_DIR: cacheDir,
        ...(shim ? { PATH: shim.path() } : {}),
        ...(prof
          ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${prof}`.trim() }
          : {}),
      });
      shim?.take(); // the version check at start
      return { scn, lc, resolver };
    });
    return {
      versions,
      server,
      cacheDir,
      workload,
      plane,
      shim,
      resolverUp,
      configured,
      files,
      head: workload.c1,
      clientStats: { retries: 0 },
    };
  },

  phases(ctx, s) {
    const f = ctx.flags;
    const n = f.requests;
    const { server, workload, plane, shim, clientStats } = s;
    const changed = Math.min(s.files, f.changed);
    const untilSettled = async (x: Sample) => {
      while (f["closed-loop"] && x.done === undefined && x.failed === undefined && !ctx.signal.aborted)
        await sleep(2);
    };
    const sizes = { concurrency: f.concurrency, warmup: f.warmup, requests: n, signal: ctx.signal };
    const measureFloor = () =>
      runSameRunFloor({
        ...sizes,
        plane,
        services: ctx.services,
        clientStats,
        wrap: (send) => async (client, name, i, x) => {
          await send(client, name, i, x);
          await untilSettled(x);
        },
        shape:
          f["floor-shape"] === "git"
            ? (i) => ({
                params: {
                  url: workload.url,
                  revision: "main",
                  pathInRepo: workload.taskPath(i),
                  cache: "never",
                },
                status: gitSuccessStatus(
                  workload.url,
                  workload.c1,
                  workload.taskPath(i),
                  taskYaml(`t-${i}`, "v1"),
                ),
              })
            : undefined,
      });
    let first: phaseReport.FloorRun | undefined;
    const phase = (name: PhaseName, k: number): Phase<Step> => ({
      name,
      stop: (x) => (x.git?.phase.completed ?? 0) < n,
      run: async () => {
        // each phase is also compared with a floor measured just before it
        const adjacentFloor = f.floor && f["floor-each"] && k > 0 ? await measureFloor() : first;
        const { scn, lc, resolver } = await s.resolverUp();
        let definition = "";
        let revision = "main";
        let cache = "never";
        let warmup = f.warmup;
        switch (name) {
          case "cold":
            definition = `fresh cache; tasks/t-<i>.yaml at main (${workload.c1.slice(0, 8)})`;
            break;
          case "new-commit": {
            const files: Record<string, string> = { [bulkPath("bulk", 0)]: `changed at ${Date.now()}\n` };
            for (let j = 0; j < changed; j++) {
              const i = Math.floor((j * Math.min(n, s.files)) / Math.max(1, changed));
              files[workload.taskPath(i)] = taskYaml(`t-${i}`, "v2");
            }
            s.head = await commitFiles(workload.bare, "main", files, "new commit");
            definition = `main moved to ${s.head.slice(0, 8)} (${changed} requested files changed); same files by branch`;
            break;
          }
          case "hot":
            definition = `same files at main (${s.head.slice(0, 8)}), all cached`;
            break;
          case "hot-pinned":
            definition = `same files at revision ${s.head.slice(0, 8)}… (commit id: no ref lookup)`;
            revision = s.head;
            break;
          case "hot-sdk":
            definition = `same files at main, cache=always: the SDK's result cache (${n} unmeasured requests fill it)`;
            cache = "always";
            warmup = n;
            break;
        }
        // counted from the first measured create on: the server's log, reaped git processes' CPU, the tree's memory
        const open = () => ({
          serverLogAt: server.log.length,
          gitCpu0: reapedChildrenCpuSeconds(resolver.svc.pid),
          serverCpu0: reapedChildrenCpuSeconds(process.pid),
          tree: new TreeRssSampler(resolver.svc.pid, f["tree-sample-ms"]),
        });
        let window: ReturnType<typeof open> | undefined;
        const send = async (client: KubeClient, reqName: string, i: number, x: Sample) => {
          if (!reqName.startsWith("warm-") && window === undefined) {
            shim?.take();
            window = open();
          }
          const warm = reqName.startsWith("warm-") && name !== "hot-sdk";
          await createWithRetry(
            client,
            gitRequest(workload, scn.namespace, reqName, i, { revision, cache, warm }),
            clientStats,
            ctx.signal,
          );
          x.created = performance.now();
          await untilSettled(x);
        };
        const p = await runPhase({
          ...sizes,
          warmup,
          name,
          cp: plane.cp,
          namespace: scn.namespace,
          services: [lc.svc, resolver.svc],
          pids: plane.pids,
          send,
          resources: ["resolutionrequests", "events"],
        });
        const w = window ?? open();
        w.tree.stop();
        const gitCpu = reapedChildrenCpuSeconds(resolver.svc.pid) - w.gitCpu0;
        const serverCpu = reapedChildrenCpuSeconds(process.pid) - w.serverCpu0;
        const procs = shim?.take();
        const measured = server.log.slice(w.serverLogAt);
        const firstSent = [...p.batch.samples]
          .sort((a, b) => a.t0 - b.t0)
          .slice(0, f.concurrency)
          .flatMap((x) => (x.done !== undefined ? [x.done - x.t0] : []));
        const gitOps: Record<string, number> = {};
        for (const op of ["fetch", "blob", "memory_hit", "access_check", "eviction"])
          gitOps[op] = metricDelta(p, "git-resolver", "quarry_git_operations_total", { operation: op });
        const byCommand: Record<string, number> = {};
        for (const x of procs ?? []) {
          const cmd = x.command.split(" ")[0] ?? "?";
          byCommand[cmd] = (byCommand[cmd] ?? 0) + 1;
        }
        const largest = (procs ?? []).reduce<{ maxRssKiB: number; command: string } | undefined>(
          (a, b) => (a === undefined || b.maxRssKiB > a.maxRssKiB ? b : a),
          undefined,
        );
        log(
          `${name}: p50 ${p.latencyMs.p50} ms, p99 ${p.latencyMs.p99} ms, ${p.throughputPerSecond} requests/s (${p.completed}/${n})`,
        );
        await phaseReport.deletePhaseRequests(plane.admin, scn.namespace, p, warmup, ctx.signal);
        const git: GitPhase = {
          name,
          phase: p,
          adjacentFloor,
          definition,
          firstLatencyMs: roundSummary(summarize(firstSent)),
          resolverVmHwmMiB: MiB(vmKiB(resolver.svc.pid, "VmHWM")),
          tree: {
            maxTreeMiB: MiB(w.tree.maxTreeKiB),
            maxGitProcessMiB: MiB(w.tree.maxGitKiB),
            gitProcessesSeen: w.tree.descendantsSeen,
            samples: w.tree.samples,
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
            foreignNet: round(p.cpu.foreign - gitCpu - serverCpu, 2),
          },
          server: { requests: measured.length, byKind: gitServerRequests(measured) },
          gitOps,
          cacheBytes: dirBytes(s.cacheDir),
          cacheBytesMetric: promSum(p.services["git-resolver"]?.metricsAfter ?? "", "quarry_git_cache_bytes"),
        };
        return { git };
      },
    });
    const floor: Phase<Step> = {
      name: "floor",
      run: async () => {
        first = await measureFloor();
        return { floor: first };
      },
    };
    return [...(f.floor ? [floor] : []), ...f.phases.map((name, k) => phase(name as PhaseName, k))];
  },

  async result(ctx, s, steps) {
    const f = ctx.flags;
    const floor = steps.find((x) => x.floor)?.floor;
    const results = gitPhases(steps);
    const { lc, resolver } = await s.resolverUp();
    const documented = documentedFloor();
    return {
      benchmark: "git-resolver",
      date: new Date().toISOString(),
      params: {
        requests: f.requests,
        concurrency: f.concurrency,
        files: s.files,
        bulkMb: f["bulk-mb"],
        changed: Math.min(s.files, f.changed),
        warmup: f.warmup,
        phases: f.phases,
        withFloor: f.floor,
        floorEach: f.floor && f["floor-each"],
        floorShape: f["floor-shape"],
        gitRss: f["git-rss"],
        treeSampleMs: f["tree-sample-ms"],
        lifecycleTimeout: f["lifecycle-timeout"],
        gitConfig: s.configured,
        closedLoop: f["closed-loop"],
        logLevel: f["log-level"],
        controllerConcurrency: controllerConcurrency(),
      },
      repository: {
        url: s.workload.url,
        c1: s.workload.c1,
        head: s.head,
        taskFiles: s.files,
        bulkFiles: s.workload.bulkFiles,
        bulkBytes: s.workload.bulkFiles * 16 * 1024,
      },
      phases: results.map((r) => {
        const p = r.phase;
        const cpu = (name: string) => phaseReport.perRequest(p.cpu.processes[name] ?? 0, p);
        const all = Object.values(p.cpu.processes).reduce((a, b) => a + b, 0) + p.cpu.benchDriver;
        return {
          name: r.name,
          definition: r.definition,
          ...phaseReport.phaseJson(p, floor, documented),
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
            resolver: cpu("git-resolver"),
            resolverGit: phaseReport.perRequest(r.cpu.resolverGitChildren, p),
            gitServer: phaseReport.perRequest(r.cpu.gitServer, p),
            lifecycleController: cpu("lifecycle-controller"),
            kubeApiserver: cpu("kube-apiserver"),
            all: phaseReport.perRequest(all + r.cpu.resolverGitChildren + r.cpu.gitServer, p),
          },
        };
      }),
      controllers: {
        "lifecycle-controller": await lc.stats.final(),
        "git-resolver": await resolver.stats.final(),
      },
      resolverWarnings: logWarnings(resolver.svc),
      floor: phaseReport.floorJson(floor),
      documentedFloor: documented instanceof Error ? { error: documented.message } : documented,
      machine: machineInfo(s.versions),
      setupSeconds: round(((results[0]?.phase.batch.start ?? performance.now()) - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx, _s, steps) {
    const f = ctx.flags;
    const rows: Row[] = [];
    for (const [k, x] of gitPhases(steps).entries()) {
      const p = x.phase;
      const j = r.phases[k]!;
      const c = j.cpuMsPerRequest;
      const gp = x.gitProcesses;
      rows.push(
        [x.name, x.definition],
        ...phaseReport.latencyRows(p, f.requests),
        [`    first ${f.concurrency} sent`, ms(x.firstLatencyMs)],
        phaseReport.resolverRow(j.resolver),
        [
          "  git engine",
          `${calls(x.gitOps)}; cache on disk ${round(x.cacheBytes / 1e6, 2)} MB after (quarry_git_cache_bytes says ${round(x.cacheBytesMetric / 1e6, 2)} MB)`,
        ],
        [
          "  git server",
          `${x.server.requests} HTTP requests (${round(x.server.requests / Math.max(1, p.completed), 2)}/request): ${calls(x.server.byKind)}`,
        ],
        ["  wall time / throughput", `${p.wallSeconds} s, ${p.throughputPerSecond} requests/s`],
        [
          "  git-resolver memory",
          `VmHWM ${x.resolverVmHwmMiB} MiB after the phase; resolver + its children sampled max ${x.tree.maxTreeMiB} MiB (PSS), largest git process sampled ${x.tree.maxGitProcessMiB} MiB RSS (${x.tree.gitProcessesSeen} children seen, every ${f["tree-sample-ms"]} ms)`,
        ],
        ...(gp
          ? [
              [
                "  git processes (time)",
                gp.count
                  ? `${gp.count}: ${calls(gp.byCommand)}; largest ${gp.maxRssMiB} MiB (${gp.largest})`
                  : "none",
              ] as Row,
            ]
          : []),
        phaseReport.processCpuRow(
          p,
          [
            ["git-resolver", p.cpu.processes["git-resolver"]],
            ["+ its git", x.cpu.resolverGitChildren],
            ["git server", x.cpu.gitServer],
            ["lifecycle-controller", p.cpu.processes["lifecycle-controller"]],
            ["kube-apiserver", p.cpu.processes["kube-apiserver"]],
            ["etcd", p.cpu.processes.etcd],
          ],
          x.cpu.foreignNet,
        ),
        [
          "  CPU ms per request",
          `resolver ${c.resolver} + its git ${c.resolverGit}, git server ${c.gitServer}, lifecycle ${c.lifecycleController}, apiserver ${c.kubeApiserver}; all ${c.all}`,
        ],
        ...phaseReport.apiCallRows(p),
        ...phaseReport.overFloorRows(j),
      );
      const a = j.adjacentFloor;
      if (r.params.floorEach && a)
        rows.push([
          "  over the floor just before it",
          `throughput ×${a.throughputRatio} (floor ${a.throughputPerSecond} requests/s, ${a.cpuMsPerRequest} ms of CPU per request)`,
        ]);
    }
    return phaseReport.resolverRunReport({
      rows,
      floor: steps.find((x) => x.floor)?.floor,
      flags: f,
      resolver: "git-resolver",
      r,
      machine: machineRows(r.machine, `, ${r.machine.git}`),
      phases: r.phases,
      columns: [
        ["git server req/request", (j) => round(j.gitServer.requests / Math.max(1, j.completed), 1)],
        [
          "CPU ms/request (resolver + git / server / all)",
          ({ cpuMsPerRequest: c }) => `${round(c.resolver + c.resolverGit, 1)} / ${c.gitServer} / ${c.all}`,
        ],
        [
          "÷ floor just before",
          ({ adjacentFloor: a }) => (a ? `${a.throughputRatio} (${a.throughputPerSecond}/s)` : ""),
        ],
      ],
    });
  },

  ok: (_r, ctx, _s, steps) => ending.ok(ctx.flags, steps),
  samples: (_s, steps) => ending.samples(steps),
});
