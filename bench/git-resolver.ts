// Benchmark: the git resolver through the real service, a resolver burst
// (lib/burst.ts). The fixture smart-HTTP git server (in this process) serves a
// generated repository; phases, in this order, on one resolver process and
// one on-disk cache:
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
// half within minutes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGitServer } from "@quarry/devcluster/git-server";
import { FlagError, loadFlags, runBenchmark } from "./lib/benchmark.ts";
import { cpuMsPerRequest, phaseFlags, resolverBurst } from "./lib/burst.ts";
import { dirBytes, GitTimeShim, reapedChildrenCpuSeconds, TreeRssSampler } from "./lib/git-procs.ts";
import { bulkPath, commitFiles, taskYaml } from "./lib/git-repo.ts";
import { gitSuccessStatus } from "./lib/git-status.ts";
import type { PhaseResult } from "./lib/phase.ts";
import type { FloorRun } from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { versionOf } from "./lib/report.ts";
import { metricDelta } from "./lib/resolver-view.ts";
import { MiB } from "./lib/service-stats.ts";
import { round, roundSummary, summarize } from "./lib/stats.ts";
import { buildGitWorkload, configureGitNamespace, gitRequest, gitServerRequests } from "./lib/workloads.ts";

const PHASES = ["cold", "new-commit", "hot", "hot-pinned", "hot-sdk"] as const;

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

await runBenchmark(
  resolverBurst({
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
      ...phaseFlags(PHASES),
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
    resolver: "git-resolver",
    type: "git",
    namespace: "bench-git",
    phaseNames: (f) => f.phases,
    withFloor: (f) => f.floor,
    floorEach: (f) => f["floor-each"],
    versions: () => ({ git: versionOf("git", ["--version"]) }),

    async setup(ctx) {
      const f = ctx.flags;
      const configured = gitConfig(f["git-config"]);
      const files = f.files ?? f.requests;
      const server = await startGitServer();
      ctx.defer(() => server.stop());
      const cacheDir = mkdtempSync(join(tmpdir(), "quarry-bench-git-cache-"));
      ctx.defer(() => rmSync(cacheDir, { recursive: true, force: true }));
      const workload = await buildGitWorkload(server, { files, bulkMb: f["bulk-mb"] });
      const shim = f["git-rss"] ? new GitTimeShim() : undefined;
      if (shim) ctx.defer(() => shim.dispose());
      return { server, cacheDir, workload, shim, configured, files, head: workload.c1 };
    },
    configure: (scn, s, ctx) =>
      configureGitNamespace(scn, s.server, ctx.flags["lifecycle-timeout"], s.configured),
    env: ({ cacheDir, shim }, ctx) => {
      const prof = ctx.flags["cpu-prof"];
      const options = `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${prof}`.trim();
      return {
        QUARRY_GIT_CACHE_DIR: cacheDir,
        ...(shim ? { PATH: shim.path() } : {}),
        ...(prof ? { NODE_OPTIONS: options } : {}),
      };
    },
    floorShape: ({ workload: w }, f) =>
      f["floor-shape"] === "git"
        ? (i) => ({
            params: { url: w.url, revision: "main", pathInRepo: w.taskPath(i), cache: "never" },
            status: gitSuccessStatus(w.url, w.c1, w.taskPath(i), taskYaml(`t-${i}`, "v1")),
          })
        : undefined,

    async plan(ctx, s, name, { resolver }) {
      const f = ctx.flags;
      const n = f.requests;
      const { server, workload } = s;
      const changed = Math.min(s.files, f.changed);
      const pid = resolver.svc.pid;
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
        gitCpu0: reapedChildrenCpuSeconds(pid),
        serverCpu0: reapedChildrenCpuSeconds(process.pid),
        tree: new TreeRssSampler(pid, f["tree-sample-ms"]),
      });
      let window: ReturnType<typeof open> | undefined;
      return {
        definition,
        warmup,
        request: (ns, reqName, i, warm) =>
          gitRequest(workload, ns, reqName, i, { revision, cache, warm: warm && name !== "hot-sdk" }),
        open: () => {
          s.shim?.take();
          window = open();
        },
        close: (p) => {
          const w = window ?? open();
          w.tree.stop();
          const gitCpu = reapedChildrenCpuSeconds(pid) - w.gitCpu0;
          const serverCpu = reapedChildrenCpuSeconds(process.pid) - w.serverCpu0;
          const procs = s.shim?.take();
          const measured = server.log.slice(w.serverLogAt);
          const firstSent = [...p.batch.samples]
            .sort((a, b) => a.t0 - b.t0)
            .slice(0, f.concurrency)
            .flatMap((x) => (x.done !== undefined ? [x.done - x.t0] : []));
          const gitOps: Record<string, number> = {};
          for (const op of ["fetch", "blob", "memory_hit", "access_check", "eviction"])
            gitOps[op] = metricDelta(p, "git-resolver", "quarry_git_operations_total", { operation: op });
          const gitProcesses = procs && {
            count: procs.processes,
            maxRssMiB: procs.largestMiB,
            largest: procs.largestCommand,
            byCommand: procs.byCommand,
          };
          return {
            /** latency of the first --concurrency requests sent (those that can have waited for a fetch) */
            firstRequestsLatencyMs: roundSummary(summarize(firstSent)),
            resolver: {
              gitOps,
              vmHwmAfterMiB: MiB(vmKiB(pid, "VmHWM")),
              processTree: {
                maxTreeMiB: MiB(w.tree.maxTreeKiB),
                maxGitProcessMiB: MiB(w.tree.maxGitKiB),
                gitProcessesSeen: w.tree.descendantsSeen,
                samples: w.tree.samples,
              },
              gitProcesses,
              cacheBytesAfter: dirBytes(s.cacheDir),
              /** what the resolver's quarry_git_cache_bytes said after the phase */
              cacheBytesMetricAfter: promSum(
                p.services["git-resolver"]?.metricsAfter ?? "",
                "quarry_git_cache_bytes",
              ),
            },
            gitServer: { requests: measured.length, byKind: gitServerRequests(measured) },
            cpu: {
              resolverGitChildren: round(gitCpu, 2),
              gitServer: round(serverCpu, 2),
              foreignNet: round(p.cpu.foreign - gitCpu - serverCpu, 2),
            },
          };
        },
      };
    },

    params: (f, s) => ({
      files: s.files,
      changed: Math.min(s.files, f.changed),
      floorEach: f.floor && f["floor-each"],
      gitConfig: s.configured,
    }),
    top: (s) => ({
      repository: {
        url: s.workload.url,
        c1: s.workload.c1,
        head: s.head,
        taskFiles: s.files,
        bulkFiles: s.workload.bulkFiles,
        bulkBytes: s.workload.bulkFiles * 16 * 1024,
      },
    }),
    phaseJson: ({ cpu, ...x }, p, b) => ({
      ...x,
      adjacentFloor: adjacentFloorJson(p, b.adjacentFloor),
      cpuSecondsMeasured: { ...p.cpu, ...cpu },
      cpuMsPerRequest: cpuMsPerRequest(p, "git-resolver", {
        resolverGit: cpu.resolverGitChildren,
        gitServer: cpu.gitServer,
      }),
    }),
    columns: [
      ["git server req/request", (j) => round(j.gitServer.requests / Math.max(1, j.completed), 1)],
      [
        "CPU ms/request (resolver + git / server / all)",
        ({ cpuMsPerRequest: c }) => `${round(c.resolver + c.resolverGit, 1)} / ${c.gitServer} / ${c.all}`,
      ],
      [
        "÷ floor just before (its req/s, CPU ms/request)",
        ({ adjacentFloor: a }) =>
          a && `${a.throughputRatio} (${a.throughputPerSecond}/s, ${a.cpuMsPerRequest} ms)`,
      ],
    ],
  }),
);
