import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE, resolutionRequests } from "@quarry/api";
import { buildBinaries } from "@quarry/devcluster/controlplane";
import { startGitServer } from "@quarry/devcluster/git-server";
import type { RunningService } from "@quarry/devcluster/service";
import { newRequest, newScenario, type Scenario, setConfig } from "@quarry/harness/scenario";
import { isApiError, type KubeClient } from "@quarry/kube";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import {
  benchGitEnv,
  dirBytes,
  type GitProcessRecord,
  GitTimeShim,
  resetPeakRss,
  run as runCmd,
  shallowClone,
  TreeRssSampler,
  tektonWay,
} from "./lib/git-procs.ts";
import {
  bulkPath,
  cachedRepo,
  commitFiles,
  fastImport,
  historyCommits,
  initBare,
  repoSizes,
  serveShared,
  sourceText,
  taskYaml,
} from "./lib/git-repo.ts";
import { runPhase } from "./lib/phase.ts";
import { vmKiB } from "./lib/proc.ts";
import { machineInfo, versionOf } from "./lib/report.ts";
import { createWithRetry, type Sample } from "./lib/requests.ts";
import { metricDelta } from "./lib/resolver-view.ts";
import { log } from "./lib/run.ts";
import { stopService } from "./lib/service-stats.ts";
import { median, round, table } from "./lib/stats.ts";

const PATH_IN_REPO = "task.yaml";

const mib = (kib: number) => round(kib / 1024, 1);

/** GNU time is what records each git process's peak RSS; Debian ships it as the `time` package. */
async function ensureTime(): Promise<void> {
  if (existsSync("/usr/bin/time")) return;
  log("/usr/bin/time is missing: installing the `time` package");
  await runCmd("apt-get", ["install", "-y", "-q", "time"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (!existsSync("/usr/bin/time")) throw new Error("/usr/bin/time is needed (apt-get install time)");
}

interface GitFigures {
  processes: number;
  /** the largest peak RSS of one git process (GNU time), MiB */
  largestMiB: number;
  largestCommand: string;
  byCommand: Record<string, number>;
}

function gitFigures(procs: readonly GitProcessRecord[]): GitFigures {
  const byCommand: Record<string, number> = {};
  let largest: GitProcessRecord | undefined;
  for (const p of procs) {
    const cmd = p.command.split(" ")[0] ?? "?";
    byCommand[cmd] = (byCommand[cmd] ?? 0) + 1;
    if (!largest || p.maxRssKiB > largest.maxRssKiB) largest = p;
  }
  return {
    processes: procs.length,
    largestMiB: mib(largest?.maxRssKiB ?? 0),
    largestCommand: largest?.command ?? "",
    byCommand,
  };
}

interface QuarryMeasurement {
  phase: "cold" | "new commit" | "hot";
  commit: string;
  /** create sent → Succeeded=True seen */
  latencyMs: number;
  /** picked up → outcome written, from the resolver's histogram sum */
  inProcessMs: number;
  git: GitFigures;
  /** the resolver's peak RSS during the request over its RSS before it (VmHWM reset first) */
  resolverGrowthMiB: number;
  resolverPeakMiB: number;
  /** resolver + its git processes, PSS, sampled every 20 ms */
  treePeakMiB: number;
  /** what the on-disk cache grew by */
  cacheGrowthMB: number;
  serverRequests: number;
  gitOps: Record<string, number>;
}

interface OtherMeasurement {
  way: "clone" | "tekton";
  ms: number;
  git: GitFigures;
  /** size of the clone's .git directory (what was transferred, unpacked or not) */
  gitDirMB: number;
}

await runBenchmark({
  name: "git-large-history",
  about:
    "One file from a large history through the git resolver, against git clone --depth 1 and Tekton's way.",
  deadline: 900,
  flags: {
    runs: {
      type: "int",
      default: 3,
      min: 1,
      help: "measurements of each way and phase; the table shows medians",
    },
    "tree-mb": { type: "int", default: 156, min: 1, help: "size of the tip tree, in --file-kib files" },
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
  setup: async () => ({}),
  phases: (ctx) =>
    onePhase("runs", async () => {
      const f = ctx.flags;
      const [RUNS, TREE_MB, HISTORY_MB, COMMITS, FILE_KIB, LOG_LEVEL] = [
        f.runs,
        f["tree-mb"],
        f["history-mb"],
        f.commits,
        f["file-kib"],
        f["log-level"],
      ];
      const FILES = Math.round((TREE_MB * 1024) / FILE_KIB);
      const PER_COMMIT = Math.max(1, Math.ceil((HISTORY_MB * 1024) / FILE_KIB / COMMITS));
      const shim = new GitTimeShim();
      ctx.defer(() => shim.dispose());
      const running: RunningService[] = [];
      ctx.defer(() => Promise.all(running.map(stopService)));
      const out: string[] = [];
      await ensureTime();
      const binDir = buildBinaries();
      const versions = {
        node: process.version,
        git: versionOf("git", ["--version"]),
        kubeApiserver: versionOf(join(binDir, "kube-apiserver"), ["--version"]),
        etcd: versionOf(join(binDir, "etcd"), ["--version"]),
      };

      // ---- the repository: generated once, then cached ----
      const key = `large-history-v1-${FILES}x${FILE_KIB}k-${COMMITS}x${PER_COMMIT}`;
      const genStart = performance.now();
      const { gitDir: cached, built } = await cachedRepo(key, async (gitDir) => {
        log(
          `generating ${key}: ${FILES} files of ${FILE_KIB} KiB, then ${COMMITS} commits rewriting ${PER_COMMIT} each (once; cached)`,
        );
        await fastImport(
          gitDir,
          historyCommits({
            files: FILES,
            fileBytes: FILE_KIB * 1024,
            commits: COMMITS,
            filesPerCommit: PER_COMMIT,
            taskPath: PATH_IN_REPO,
          }),
        );
      });
      const generationSeconds = round((performance.now() - genStart) / 1000, 1);
      const sizes = await repoSizes(cached);
      const tipBytes = (
        await runCmd("git", ["--git-dir", cached, "ls-tree", "-r", "-l", "main"], { env: benchGitEnv() })
      )
        .split("\n")
        .reduce((sum, line) => sum + (Number(line.split(/\s+/)[3]) || 0), 0);
      const repository = {
        cacheKey: key,
        path: cached,
        builtNow: built,
        generationSeconds: built ? generationSeconds : undefined,
        commits: COMMITS + 1,
        tipFiles: FILES + 1,
        tipTreeMB: round(tipBytes / 1e6, 1),
        historyRewrittenMB: round((COMMITS * PER_COMMIT * FILE_KIB * 1024) / 1e6, 1),
        packedMB: round(sizes.packBytes / 1e6, 1),
        objects: sizes.objects,
      };
      log(
        `repository ${built ? `generated in ${generationSeconds} s` : "from the cache"}: ${repository.commits} commits, tip tree ${repository.tipTreeMB} MB, ${repository.packedMB} MB packed (${repository.objects} objects)`,
      );

      const gitServer = await startGitServer();
      ctx.defer(() => gitServer.stop());
      const bare = await serveShared(cached, gitServer.root, "big.git");
      const url = gitServer.url("big.git");
      const warmBare = join(gitServer.root, "warmup.git");
      await initBare(warmBare);
      await commitFiles(warmBare, "main", { "task.yaml": taskYaml("warm-up") }, "warm-up", "");
      const warmUrl = gitServer.url("warmup.git");

      // ---- control plane and lifecycle controller ----
      const { cp, info, admin } = await ctx.controlPlane();
      const scn: Scenario = await newScenario("bench-git-large", { cp: info });
      await setConfig(scn, "git-resolver-config", {
        "allowed-urls": `${gitServer.baseUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/.*`,
      });
      const lc = await scn.start("lifecycle-controller", { LOG_LEVEL });
      ctx.run.track(lc.pid);
      running.push(lc);
      const clientStats = { retries: 0 };
      const controlPlane = cp;

      let seq = 0;
      /** One request through the services, measured (warm-up requests read the small repository first). */
      async function viaQuarry(
        resolver: RunningService,
        cacheDir: string,
        phase: QuarryMeasurement["phase"],
        commit: string,
        warmup: number,
      ): Promise<QuarryMeasurement> {
        // taken when the measured request is sent (after the warm-up)
        const before = { rssKiB: Number.NaN, serverLog: 0, cacheBytes: 0 };
        let tree: TreeRssSampler | undefined;
        const send = async (client: KubeClient, name: string, _i: number, s: Sample) => {
          const warm = name.startsWith("warm-");
          const params = warm
            ? { url: warmUrl, revision: "main", pathInRepo: "task.yaml", cache: "never" }
            : { url, revision: "main", pathInRepo: PATH_IN_REPO, cache: "never" };
          if (!warm) {
            shim.take();
            resetPeakRss(resolver.pid);
            before.rssKiB = vmKiB(resolver.pid, "VmRSS") ?? Number.NaN;
            before.serverLog = gitServer.log.length;
            before.cacheBytes = dirBytes(cacheDir);
            tree = new TreeRssSampler(resolver.pid, 20);
          }
          await createWithRetry(
            client,
            newRequest(scn.namespace, name, { [LABEL_RESOLVER_TYPE]: "git" }, params),
            clientStats,
            ctx.signal,
          );
          s.created = performance.now();
        };
        const p = await runPhase({
          name: `${phase} (${++seq})`,
          cp: controlPlane,
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
        const procs = shim.take();
        const hwm = vmKiB(resolver.pid, "VmHWM") ?? Number.NaN;
        const gitOps: Record<string, number> = {};
        for (const op of ["fetch", "blob", "memory_hit", "access_check"]) {
          gitOps[op] = metricDelta(p, "git-resolver", "quarry_git_operations_total", { operation: op });
        }
        if (p.completed !== 1)
          throw new Error(`quarry ${phase}: ${p.failures.join("; ") || "did not complete"}`);
        const m: QuarryMeasurement = {
          phase,
          commit,
          latencyMs: p.latencyMs.p50,
          inProcessMs: round(
            metricDelta(p, "git-resolver", "quarry_resolution_duration_seconds_sum", {
              type: "git",
              outcome: "succeeded",
            }) * 1000,
            1,
          ),
          git: gitFigures(procs),
          resolverGrowthMiB: mib(hwm - before.rssKiB),
          resolverPeakMiB: mib(hwm),
          treePeakMiB: mib(tree?.maxTreeKiB ?? Number.NaN),
          cacheGrowthMB: round((dirBytes(cacheDir) - before.cacheBytes) / 1e6, 2),
          serverRequests: gitServer.log.length - before.serverLog,
          gitOps,
        };
        // the next measurement reuses the phase's request names
        const names = [
          ...p.batch.samples.map((s) => s.name),
          ...Array.from({ length: warmup }, (_, i) => `warm-${String(i).padStart(5, "0")}`),
        ];
        for (const name of names) {
          await admin.delete(resolutionRequests, scn.namespace, name).catch((err: unknown) => {
            if (!isApiError(err, 404)) throw err;
          });
        }
        log(
          `quarry ${phase}: ${m.latencyMs} ms (in process ${m.inProcessMs} ms), ${m.git.processes} git processes, largest ${m.git.largestMiB} MiB, resolver +${m.resolverGrowthMiB} MiB`,
        );
        return m;
      }

      async function other(way: OtherMeasurement["way"]): Promise<OtherMeasurement> {
        shim.take();
        const env = benchGitEnv(shim.path());
        let gitDirMB = Number.NaN;
        const inspect = (dir: string) => {
          gitDirMB = round(dirBytes(join(dir, ".git")) / 1e6, 1);
        };
        const res =
          way === "clone"
            ? await shallowClone(url, "main", PATH_IN_REPO, { env, signal: ctx.signal, inspect })
            : await tektonWay(url, "main", PATH_IN_REPO, { env, signal: ctx.signal, inspect });
        const m: OtherMeasurement = { way, ms: round(res.ms, 1), git: gitFigures(shim.take()), gitDirMB };
        log(
          `${way}: ${m.ms} ms, ${m.git.processes} git processes, largest ${m.git.largestMiB} MiB, .git ${gitDirMB} MB`,
        );
        return m;
      }

      const quarry: QuarryMeasurement[] = [];
      const others: OtherMeasurement[] = [];
      const resolverPeaks: number[] = [];
      for (let r = 0; r < RUNS && !ctx.signal.aborted; r++) {
        log(`run ${r + 1}/${RUNS}`);
        const cacheDir = mkdtempSync(join(tmpdir(), "quarry-bench-git-large-cache-"));
        ctx.defer(() => rmSync(cacheDir, { recursive: true, force: true }));
        const resolver = await scn.start("git-resolver", {
          LOG_LEVEL,
          QUARRY_GIT_CACHE_DIR: cacheDir,
          PATH: shim.path(),
        });
        ctx.run.track(resolver.pid);
        running.push(resolver);
        const tip = (
          await runCmd("git", ["--git-dir", bare, "rev-parse", "main"], { env: benchGitEnv() })
        ).trim();
        quarry.push(await viaQuarry(resolver, cacheDir, "cold", tip, 3));
        // a new commit on main: the Task and one history file change
        const next = await commitFiles(
          bare,
          "main",
          {
            [PATH_IN_REPO]: taskYaml(`bench-${r}-${Date.now()}`),
            [bulkPath("history", r)]: sourceText(1_000_000 + r, FILE_KIB * 1024),
          },
          `bench run ${r}`,
        );
        quarry.push(await viaQuarry(resolver, cacheDir, "new commit", next, 0));
        quarry.push(await viaQuarry(resolver, cacheDir, "hot", next, 0));
        others.push(await other("clone"));
        if (f.tekton) others.push(await other("tekton"));
        resolverPeaks.push(mib(vmKiB(resolver.pid, "VmHWM") ?? Number.NaN));
        await stopService(resolver);
        running.splice(running.indexOf(resolver), 1);
      }

      // ---- report ----
      const q = (phase: QuarryMeasurement["phase"]) => quarry.filter((m) => m.phase === phase);
      const o = (way: OtherMeasurement["way"]) => others.filter((m) => m.way === way);
      const med = <T>(xs: readonly T[], f: (x: T) => number) => round(median(xs.map(f)), 1);
      const summary = {
        quarry: Object.fromEntries(
          (["cold", "new commit", "hot"] as const).map((phase) => {
            const xs = q(phase);
            return [
              phase,
              {
                latencyMs: med(xs, (m) => m.latencyMs),
                inProcessMs: med(xs, (m) => m.inProcessMs),
                largestGitMiB: med(xs, (m) => m.git.largestMiB),
                gitProcesses: med(xs, (m) => m.git.processes),
                resolverGrowthMiB: med(xs, (m) => m.resolverGrowthMiB),
                treePeakMiB: med(xs, (m) => m.treePeakMiB),
                cacheGrowthMB: med(xs, (m) => m.cacheGrowthMB),
                serverRequests: med(xs, (m) => m.serverRequests),
              },
            ];
          }),
        ),
        clone: {
          ms: med(o("clone"), (m) => m.ms),
          largestGitMiB: med(o("clone"), (m) => m.git.largestMiB),
          gitDirMB: med(o("clone"), (m) => m.gitDirMB),
        },
        tekton: f.tekton
          ? {
              ms: med(o("tekton"), (m) => m.ms),
              largestGitMiB: med(o("tekton"), (m) => m.git.largestMiB),
              gitDirMB: med(o("tekton"), (m) => m.gitDirMB),
            }
          : undefined,
      };
      const result = {
        benchmark: "git-large-history",
        date: new Date().toISOString(),
        params: {
          runs: RUNS,
          treeMb: TREE_MB,
          historyMb: HISTORY_MB,
          commits: COMMITS,
          fileKib: FILE_KIB,
          tekton: f.tekton,
          logLevel: LOG_LEVEL,
        },
        repository,
        summary,
        resolverPeakRssMiB: resolverPeaks,
        quarry,
        others,
        machine: machineInfo(versions),
      };

      const ratio = (a: number, b: number) =>
        Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${round(a / b, 1)}×` : "";
      const t = summary.tekton;
      const c = summary.clone;
      out.push(
        `\nrepository: ${repository.commits} commits, tip tree ${repository.tipTreeMB} MB (${repository.tipFiles} files), ${repository.historyRewrittenMB} MB rewritten in history, ${repository.packedMB} MB packed; medians of ${RUNS} run(s)\n`,
      );
      out.push(
        "| way | phase | time ms | largest git process MiB | git processes | other memory | transferred / on disk | Tekton's way ÷ this (time / memory) |",
      );
      out.push("| --- | --- | --- | --- | --- | --- | --- | --- |");
      for (const phase of ["cold", "new commit", "hot"] as const) {
        const s = summary.quarry[phase]!;
        out.push(
          `| Quarry (request → Succeeded; in resolver ${s.inProcessMs} ms) | ${phase} | ${s.latencyMs} | ${s.largestGitMiB} | ${s.gitProcesses} | resolver +${s.resolverGrowthMiB} MiB; resolver + git ${s.treePeakMiB} MiB PSS | cache +${s.cacheGrowthMB} MB | ${t ? `${ratio(t.ms, s.latencyMs)} / ${ratio(t.largestGitMiB, s.largestGitMiB)}` : ""} |`,
        );
      }
      out.push(
        `| git clone --depth 1 --branch main | any | ${c.ms} | ${c.largestGitMiB} | ${med(o("clone"), (m) => m.git.processes)} | | .git ${c.gitDirMB} MB | ${t ? `${ratio(t.ms, c.ms)} / ${ratio(t.largestGitMiB, c.largestGitMiB)}` : ""} |`,
      );
      if (t) {
        out.push(
          `| Tekton's way (clone --no-checkout, fetch, checkout, rm) | any | ${t.ms} | ${t.largestGitMiB} | ${med(o("tekton"), (m) => m.git.processes)} | | .git ${t.gitDirMB} MB | 1× |`,
        );
      }
      const rows: [string, string][] = [
        ["git-resolver peak RSS (VmHWM, whole life)", resolverPeaks.map((x) => `${x} MiB`).join(", ")],
        [
          "machine",
          `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}, ${versions.git}`,
        ],
        ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
      ];
      out.push(`\n${table(rows)}`);
      return { result, text: out.join("\n"), complete: quarry.length === RUNS * 3 };
    }),
  result: (_ctx, _s, [m]) => {
    if (!m) throw new Error("no run");
    return m.result;
  },
  report: (_r, _ctx, _s, [m]) => m?.text ?? "",
  ok: (_r, _ctx, _s, [m]) => m?.complete === true,
});
