// The git engine alone (GitCliSource: no services, no Kubernetes) against Tekton's way, each
// measurement in a fresh process: its wall time, the largest git process (GitTimeShim) and, for
// the engine, how much the node process grew over the operation (ref discovery, buffers).
// --content fixture uses dev/harness' addHistory, whose near-copies pack a 156 MB tree into a few
// MB (how the figures in services/git-resolver/README.md were made).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { startGitServer } from "@quarry/devcluster/git-server";
import { GitCliSource } from "@quarry/git-resolver/engine/git-cli-source";
import { runBenchmark } from "./lib/benchmark.ts";
import { commitTaskChange, oneFileFlags, PATH_IN_REPO, PHASES } from "./lib/git-one-file.ts";
import { ensureTime, GitTimeShim, readWithoutQuarry, run } from "./lib/git-procs.ts";
import { fastImport, historyCommits, initBare, repoSizes } from "./lib/git-repo.ts";
import { markdownTable } from "./lib/phase-report.ts";
import { log } from "./lib/run.ts";
import { median, round } from "./lib/stats.ts";
import { flagParams } from "./lib/value-rows.ts";

const ENGINES = ["tekton", "quarry"] as const;
type Engine = (typeof ENGINES)[number];
type Sample = { engine: Engine; phase: string; wallMs: number; gitPeakMiB: number; nodeKiB: number };
type OpResult = { ms: number; growthKiB: number };

/** A measurement's child process gets its operation in this variable. */
const OP = "QUARRY_GIT_ENGINES_OP";
const op = process.env[OP];
if (op) {
  const { engine, url, cache } = JSON.parse(op) as { engine: Engine; url: string; cache: string };
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  let ms: number;
  if (engine === "tekton") ms = (await readWithoutQuarry("tekton", url, "main", PATH_IN_REPO)).ms;
  else {
    const source = new GitCliSource({ cacheRoot: cache });
    const req = { auth: undefined, signal: AbortSignal.timeout(120_000) };
    const commit = await source.resolveRevision(url, { kind: "ref", name: "main" }, req);
    await source.readFile(url, commit, PATH_IN_REPO, req);
    ms = performance.now() - t0;
  }
  const growthKiB = Math.max(0, process.resourceUsage().maxRSS - rssBefore / 1024);
  console.log(`\n${JSON.stringify({ ms, growthKiB })}`);
  process.exit(0);
}

await runBenchmark({
  name: "git-engines",
  about:
    "The git engine against Tekton's way, without Kubernetes: cold, new commit and hot, each in a fresh process.",
  deadline: 3600,
  flags: {
    ...oneFileFlags("32 KiB"),
    content: {
      type: "string",
      default: "source",
      choices: ["source", "fixture"],
      help: "source: text that packs ~1.8:1; fixture: dev/harness' near-copies",
    },
  },

  async setup(ctx) {
    const f = ctx.flags;
    await ensureTime();
    const shim = new GitTimeShim();
    ctx.defer(() => shim.dispose());
    const server = await startGitServer();
    ctx.defer(() => server.stop());
    const files = Math.round((f["tree-mb"] * 1024) / 32);
    log(`building a ${f["tree-mb"]} MB tree (${files} files of 32 KiB, ${f.content} content)`);
    const history = { files, fileBytes: 32 * 1024, commits: 1, filesPerCommit: 10, taskPath: PATH_IN_REPO };
    const bare = join(server.root, "big.git");
    let newCommit = (i: number): Promise<unknown> =>
      commitTaskChange(bare, i, `bench-${i}`, `changed ${i}\n`);
    if (f.content === "fixture") {
      const repo = await RepoBuilder.create(server.root, "big.git");
      ctx.defer(() => repo.dispose());
      await repo.addHistory({ ...history, commits: 2 });
      await repo.push();
      newCommit = async (i) => {
        repo.write(PATH_IN_REPO, `apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: bench-${i}\n`);
        repo.write(`history/0/f${i}.txt`, `changed ${i}\n`);
        await repo.commit(`bench ${i}`);
        await repo.push();
      };
    } else {
      await initBare(bare);
      await fastImport(bare, historyCommits(history));
    }
    const sizes = await repoSizes(bare);
    log(`repository: ${(sizes.packBytes / 1e6).toFixed(1)} MB packed, ${sizes.objects} objects`);
    return { url: server.url("big.git"), newCommit, sizes, shim };
  },

  phases: (ctx, { url, newCommit, shim }) =>
    ENGINES.map((engine) => ({
      name: engine,
      run: async () => {
        const samples: Sample[] = [];
        for (let r = 0; r < ctx.flags.runs && !ctx.signal.aborted; r++) {
          const cache = mkdtempSync(join(tmpdir(), "quarry-bench-cache-"));
          for (const phase of PHASES) {
            if (phase === "new commit") await newCommit(r + (engine === "tekton" ? 0 : 100));
            const out = await run(process.execPath, [import.meta.filename], {
              env: { ...process.env, PATH: shim.path(), [OP]: JSON.stringify({ engine, url, cache }) },
            });
            const { ms, growthKiB } = JSON.parse(out.trim().split("\n").at(-1)!) as OpResult;
            samples.push({
              engine,
              phase,
              wallMs: ms,
              gitPeakMiB: shim.take().largestMiB,
              nodeKiB: growthKiB,
            });
          }
          rmSync(cache, { recursive: true, force: true });
        }
        return samples;
      },
    })),

  result: (ctx, { sizes }, phases) => ({
    benchmark: "git-engines",
    date: new Date().toISOString(),
    params: flagParams(ctx.flags),
    repository: sizes,
    medians: ENGINES.flatMap((engine) =>
      PHASES.map((phase) => {
        const xs = phases.flat().filter((s) => s.engine === engine && s.phase === phase);
        const med = (f: (s: Sample) => number, digits: number) => round(median(xs.map(f)), digits);
        return {
          engine,
          phase,
          wallMs: med((s) => s.wallMs, 0),
          largestGitMiB: med((s) => s.gitPeakMiB, 1),
          nodeGrowthMiB: engine === "quarry" ? med((s) => s.nodeKiB / 1024, 0) : undefined,
        };
      }),
    ),
  }),

  report: (r) => {
    const header =
      "engine | phase | wall (median ms) | peak RSS of the largest git process (MB) | node RSS growth (MB)";
    const rows = r.medians.map((m) => [m.engine, m.phase, m.wallMs, m.largestGitMiB, m.nodeGrowthMiB ?? ""]);
    return markdownTable(header.split(" | "), rows);
  },
  ok: (_r, ctx, _s, phases) => phases.flat().length === ENGINES.length * PHASES.length * ctx.flags.runs,
});
