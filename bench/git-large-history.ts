// One file from a large history through the git resolver (cold, at a new commit, hot) against
// `git clone --depth 1` and Tekton's way, on a generated repository kept between runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { git } from "@quarry/devcluster/git-repos";
import { startGitServer } from "@quarry/devcluster/git-server";
import type { RunningService } from "@quarry/devcluster/service";
import { newRequest, newScenario, setConfig } from "@quarry/harness/scenario";
import type { KubeClient } from "@quarry/kube";
import { runBenchmark } from "./lib/benchmark.ts";
import {
  commitTaskChange,
  medians,
  type OneFilePhase,
  oneFileFlags,
  PATH_IN_REPO,
  PHASES,
  ratio,
} from "./lib/git-one-file.ts";
import {
  dirBytes,
  ensureTime,
  type GitFigures,
  GitTimeShim,
  readWithoutQuarry,
  resetPeakRss,
  TreeRssSampler,
} from "./lib/git-procs.ts";
import { cachedHistory, repoSizes, revParse, serveShared, sourceText } from "./lib/git-repo.ts";
import { runPhase } from "./lib/phase.ts";
import { vmKiB } from "./lib/proc.ts";
import { controlPlaneVersions, machineInfo, machineRows, versionOf } from "./lib/report.ts";
import { createWithRetry, deleteRequests, type Sample } from "./lib/requests.ts";
import { metricDelta } from "./lib/resolver-view.ts";
import { log } from "./lib/run.ts";
import { MiB } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";
import { flagParams, valueReport } from "./lib/value-rows.ts";
import { allowedUrls, buildWarmupRepo } from "./lib/workloads.ts";

const OTHER_WAYS = {
  clone: "git clone --depth 1 --branch main",
  tekton: "Tekton's way (clone --no-checkout, fetch, checkout, rm)",
} as const;

await runBenchmark({
  name: "git-large-history",
  about:
    "One file from a large history through the git resolver, against git clone --depth 1 and Tekton's way.",
  deadline: 900,
  flags: {
    ...oneFileFlags("--file-kib"),
    "history-mb": {
      type: "int",
      default: 200,
      min: 0,
      help: "bytes rewritten by the commits after the first, spread over --commits",
    },
    commits: { type: "int", default: 1000, min: 1, help: "commits after the first" },
    "file-kib": { type: "int", default: 32, min: 1, help: "size of each generated file" },
    tekton: { type: "boolean", default: true, help: "skip Tekton's way" },
    "log-level": { type: "string", default: "info", arg: "L", help: "the services' LOG_LEVEL" },
  },
  notes: "The generated repository is kept under $QUARRY_CACHE/bench (default ~/.cache/quarry/bench).",

  async setup(ctx) {
    const f = ctx.flags;
    const fileKib = f["file-kib"];
    await ensureTime();
    const shim = new GitTimeShim();
    ctx.defer(() => shim.dispose());
    const versions = { git: versionOf("git", ["--version"]), ...controlPlaneVersions() };
    const history = { treeMb: f["tree-mb"], historyMb: f["history-mb"], fileKib, commits: f.commits };
    const { gitDir: cached, ...h } = await cachedHistory("large-history-v1", history);
    const sizes = await repoSizes(cached);
    const tipBytes = (await git(["--git-dir", cached, "ls-tree", "-r", "-l", "main"]))
      .split("\n")
      .reduce((sum, line) => sum + (Number(line.split(/\s+/)[3]) || 0), 0);
    const repository = {
      cacheKey: h.key,
      path: cached,
      builtNow: h.built,
      generationSeconds: h.built ? h.seconds : undefined,
      commits: f.commits + 1,
      tipFiles: h.files + 1,
      tipTreeMB: round(tipBytes / 1e6, 1),
      historyRewrittenMB: round((f.commits * h.perCommit * fileKib * 1024) / 1e6, 1),
      packedMB: round(sizes.packBytes / 1e6, 1),
      objects: sizes.objects,
    };

    const gitServer = await startGitServer();
    ctx.defer(() => gitServer.stop());
    const bare = await serveShared(cached, gitServer.root, "big.git");
    const url = gitServer.url("big.git");
    const warmUrl = await buildWarmupRepo(gitServer);
    const { cp, info, admin } = await ctx.controlPlane();
    const scn = await newScenario("bench-git-large", { cp: info });
    await setConfig(scn, "git-resolver-config", { "allowed-urls": allowedUrls(gitServer) });
    const { svc: lc } = await ctx.services.start(scn, "lifecycle-controller");

    let seq = 0;
    /** One request through the services, measured (warm-up requests read the small repository first). */
    async function viaQuarry(resolver: RunningService, cacheDir: string, phase: OneFilePhase, warmup = 0) {
      // taken when the measured request is sent (after the warm-up)
      const before = { rssKiB: Number.NaN, serverLog: 0, cacheBytes: 0 };
      let tree: TreeRssSampler | undefined;
      const send = async (client: KubeClient, name: string, _i: number, s: Sample) => {
        const warm = name.startsWith("warm-");
        if (!warm) {
          shim.take();
          resetPeakRss(resolver.pid);
          before.rssKiB = vmKiB(resolver.pid, "VmRSS") ?? Number.NaN;
          before.serverLog = gitServer.log.length;
          before.cacheBytes = dirBytes(cacheDir);
          tree = new TreeRssSampler(resolver.pid, 20);
        }
        const params = {
          url: warm ? warmUrl : url,
          revision: "main",
          pathInRepo: PATH_IN_REPO,
          cache: "never",
        };
        const rr = newRequest(scn.namespace, name, { [LABEL_RESOLVER_TYPE]: "git" }, params);
        await createWithRetry(client, rr, { retries: 0 }, ctx.signal);
        s.created = performance.now();
      };
      const p = await runPhase({
        name: `${phase} (${++seq})`,
        cp,
        namespace: scn.namespace,
        services: [lc, resolver],
        pids: {},
        concurrency: 1,
        warmup,
        requests: 1,
        signal: ctx.signal,
        send,
      });
      tree?.stop();
      const git = shim.take();
      const hwm = vmKiB(resolver.pid, "VmHWM") ?? Number.NaN;
      const gitOp = (op: string) =>
        [op, metricDelta(p, "git-resolver", "quarry_git_operations_total", { operation: op })] as const;
      if (p.completed !== 1)
        throw new Error(`quarry ${phase}: ${p.failures.join("; ") || "did not complete"}`);
      const succeeded = { type: "git", outcome: "succeeded" };
      const inProcessS = metricDelta(p, "git-resolver", "quarry_resolution_duration_seconds_sum", succeeded);
      const m = {
        phase,
        commit: await revParse(bare, "refs/heads/main"),
        /** create sent → Succeeded=True seen */
        latencyMs: p.latencyMs.p50,
        /** picked up → outcome written, from the resolver's histogram sum */
        inProcessMs: round(inProcessS * 1000, 1),
        git,
        /** the resolver's peak RSS during the request over its RSS before it (VmHWM reset first) */
        resolverGrowthMiB: MiB(hwm - before.rssKiB),
        resolverPeakMiB: MiB(hwm),
        /** resolver + its git processes, PSS, sampled every 20 ms */
        treePeakMiB: MiB(tree?.maxTreeKiB),
        cacheGrowthMB: round((dirBytes(cacheDir) - before.cacheBytes) / 1e6, 2),
        serverRequests: gitServer.log.length - before.serverLog,
        gitOps: Object.fromEntries(["fetch", "blob", "memory_hit", "access_check"].map(gitOp)),
      };
      // the next measurement reuses the phase's request names
      const warmNames = Array.from({ length: warmup }, (_, i) => `warm-${String(i).padStart(5, "0")}`);
      await deleteRequests(
        admin,
        scn.namespace,
        [...p.batch.samples.map((s) => s.name), ...warmNames],
        ctx.signal,
      );
      return m;
    }

    async function other(way: keyof typeof OTHER_WAYS) {
      shim.take();
      const opts = { path: shim.path(), signal: ctx.signal };
      const res = await readWithoutQuarry(way, url, "main", PATH_IN_REPO, opts);
      return { way, ms: round(res.ms, 1), git: shim.take(), gitDirMB: round(res.gitDirBytes / 1e6, 1) };
    }

    /** One run: a fresh resolver, Quarry cold, at a new commit and hot, then the other ways. */
    async function oneRun(r: number) {
      log(`run ${r + 1}/${f.runs}`);
      const cacheDir = mkdtempSync(join(tmpdir(), "quarry-bench-git-large-cache-"));
      ctx.defer(() => rmSync(cacheDir, { recursive: true, force: true }));
      const env = { QUARRY_GIT_CACHE_DIR: cacheDir, PATH: shim.path() };
      const { svc: resolver } = await ctx.services.start(scn, "git-resolver", env);
      const quarry = [await viaQuarry(resolver, cacheDir, "cold", 3)];
      await commitTaskChange(bare, r, `bench-${r}-${Date.now()}`, sourceText(1_000_000 + r, fileKib * 1024));
      quarry.push(await viaQuarry(resolver, cacheDir, "new commit"));
      quarry.push(await viaQuarry(resolver, cacheDir, "hot"));
      const others = [await other("clone")];
      if (f.tekton) others.push(await other("tekton"));
      const resolverPeakMiB = MiB(vmKiB(resolver.pid, "VmHWM"));
      await ctx.services.stop([resolver]);
      return { quarry, others, resolverPeakMiB };
    }
    return { repository, versions, oneRun };
  },

  phases: (ctx, { oneRun }) =>
    Array.from({ length: ctx.flags.runs }, (_, r) => ({ name: `run ${r + 1}`, run: () => oneRun(r) })),

  result(ctx, { repository, versions }, runs) {
    const f = ctx.flags;
    const quarry = runs.flatMap((r) => r.quarry);
    const others = runs.flatMap((r) => r.others);
    const gitFields = {
      largestGitMiB: (m: { git: GitFigures }) => m.git.largestMiB,
      gitProcesses: (m: { git: GitFigures }) => m.git.processes,
    };
    const otherSummary = (way: keyof typeof OTHER_WAYS) =>
      medians(
        others.filter((m) => m.way === way),
        { ms: (m) => m.ms, ...gitFields, gitDirMB: (m) => m.gitDirMB },
      );
    const quarrySummary = (phase: OneFilePhase) =>
      medians(
        quarry.filter((m) => m.phase === phase),
        {
          latencyMs: (m) => m.latencyMs,
          inProcessMs: (m) => m.inProcessMs,
          ...gitFields,
          resolverGrowthMiB: (m) => m.resolverGrowthMiB,
          treePeakMiB: (m) => m.treePeakMiB,
          cacheGrowthMB: (m) => m.cacheGrowthMB,
          serverRequests: (m) => m.serverRequests,
        },
      );
    return {
      benchmark: "git-large-history",
      date: new Date().toISOString(),
      params: flagParams(f),
      repository,
      summary: {
        quarry: Object.fromEntries(PHASES.map((phase) => [phase, quarrySummary(phase)])) as Record<
          OneFilePhase,
          ReturnType<typeof quarrySummary>
        >,
        clone: otherSummary("clone"),
        tekton: f.tekton ? otherSummary("tekton") : undefined,
      },
      resolverPeakRssMiB: runs.map((r) => r.resolverPeakMiB),
      quarry,
      others,
      machine: machineInfo(versions),
    };
  },

  report(r) {
    const { quarry: q, clone, tekton: t } = r.summary;
    const each = (cell: (p: OneFilePhase) => unknown) => PHASES.map(cell).join(" / ");
    const quarry = ["Quarry, request → Succeeded", ...PHASES.map((p) => q[p].latencyMs)];
    const other = (way: keyof typeof OTHER_WAYS, o = r.summary[way]) =>
      o ? [[OTHER_WAYS[way], o.ms, o.ms, o.ms, "", o.largestGitMiB].join(" | ")] : [];
    return valueReport(
      [
        ["repository", r.repository],
        ["runs (medians of)", r.params.runs],
        ["Quarry", q],
        [OTHER_WAYS.clone, clone],
        [OTHER_WAYS.tekton, t],
        ["Tekton's way ÷ Quarry, time", t && each((p) => ratio(t.ms, q[p].latencyMs))],
        [
          "Tekton's way ÷ Quarry, largest git process",
          t && each((p) => ratio(t.largestGitMiB, q[p].largestGitMiB)),
        ],
        ["git-resolver peak RSS MiB (VmHWM, whole life)", r.resolverPeakRssMiB],
        ...machineRows(r.machine, `, ${r.machine.git}`),
      ],
      "way | cold ms | new commit ms | hot ms | in resolver ms | largest git process MiB",
      [
        [...quarry, each((p) => q[p].inProcessMs), each((p) => q[p].largestGitMiB)].join(" | "),
        ...other("clone"),
        ...other("tekton"),
      ],
    );
  },
  ok: (r, ctx) => r.quarry.length === ctx.flags.runs * PHASES.length,
});
