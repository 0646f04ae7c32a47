// Git engine benchmark: reading one file from a repository whose tip tree is
// large (default 156 MB), served by the fixture smart-HTTP server on loopback,
// engine against engine (no Kubernetes: bench/git-large-history.ts measures
// the same through the real service).
//
// Compares, for a cold cache, a new commit on the branch, and a hot cache:
//   tekton   Tekton's git resolver: clone --depth=1 --no-checkout, fetch, checkout, read (per request)
//   quarry   GitCliSource (the git resolver's engine): ref discovery in-process, blob-filtered fetch, ls-tree, cat-file
// Each measurement runs in a fresh process: wall time of the operation, the
// peak RSS of the largest git process (every git call goes through a PATH shim
// running it under /usr/bin/time, which counts the helpers git forks), and for
// quarry how much the node process doing the work grew (its peak RSS over the
// RSS it had before the operation: isomorphic-git's ref discovery, buffers).
//
// --content source (default) fills the tree with source-like text that packs
// about 1.8:1 (bench/lib/git-repo.ts); --content fixture uses dev/harness'
// addHistory, whose files are near-copies of each other, so the 156 MB tree
// packs into a few MB (how the figures in services/git-resolver/README.md
// were made).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { startGitServer } from "@quarry/devcluster/git-server";
import { GitCliSource } from "@quarry/git-resolver/engine/git-cli-source";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import { GitTimeShim, run } from "./lib/git-procs.ts";
import {
  bulkPath,
  commitFiles,
  fastImport,
  historyCommits,
  initBare,
  repoSizes,
  taskYaml,
} from "./lib/git-repo.ts";
import { markdownTable } from "./lib/phase-report.ts";
import { log } from "./lib/run.ts";
import { median } from "./lib/stats.ts";

/** A measurement's child process gets its operation in this variable. */
const OP = "QUARRY_GIT_ENGINES_OP";

const op = process.env[OP];
if (op) {
  const { engine, url, cache } = JSON.parse(op) as { engine: string; url: string; cache: string };
  await runPhase(engine, url, cache);
  process.exit(0);
}

/** One measured operation, in its own process: resolve `main`, read task.yaml. */
async function runPhase(engine: string, url: string, cache: string): Promise<void> {
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  if (engine === "tekton") {
    const dir = mkdtempSync(join(tmpdir(), "tekton-way-"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", dir, ...args], { env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
    execFileSync("git", ["clone", "--quiet", "--depth=1", "--no-checkout", "--", url, dir]);
    git("fetch", "--quiet", "origin", "--depth=1", "--", "main");
    git("checkout", "--quiet", "FETCH_HEAD");
    readFileSync(join(dir, "task.yaml"));
    rmSync(dir, { recursive: true, force: true });
  } else {
    const source = new GitCliSource({ cacheRoot: cache });
    const req = { auth: undefined, signal: AbortSignal.timeout(120_000) };
    const commit = await source.resolveRevision(url, { kind: "ref", name: "main" }, req);
    await source.readFile(url, commit, "task.yaml", req);
  }
  const growthKiB = Math.max(0, process.resourceUsage().maxRSS - rssBefore / 1024);
  console.log(`op-ms ${(performance.now() - t0).toFixed(1)} node-growth-kib ${growthKiB.toFixed(0)}`);
}

interface Sample {
  wallMs: number;
  gitPeakKiB: number;
  nodeKiB: number | undefined;
}

/** Runs one phase in a child (asynchronously: the git server answers from this process). */
async function measure(engine: string, url: string, cache: string): Promise<Sample> {
  const shim = new GitTimeShim();
  try {
    const out = await run(process.execPath, [import.meta.filename], {
      env: { ...process.env, PATH: shim.path(), [OP]: JSON.stringify({ engine, url, cache }) },
    });
    const op = /op-ms ([\d.]+) node-growth-kib (\d+)/.exec(out);
    return {
      wallMs: Number(op?.[1]),
      gitPeakKiB: Math.max(0, ...shim.take().map((p) => p.maxRssKiB)),
      nodeKiB: engine === "quarry" ? Number(op?.[2]) : undefined,
    };
  } finally {
    shim.dispose();
  }
}

await runBenchmark({
  name: "git-engines",
  about:
    "The git engine against Tekton's way, without Kubernetes: cold, new commit and hot, each in a fresh process.",
  deadline: 3600,
  flags: {
    "tree-mb": { type: "int", default: 156, min: 1, help: "size of the tip tree, in 32 KiB files" },
    runs: {
      type: "int",
      default: 3,
      min: 1,
      help: "measurements of each engine and phase; the table shows medians",
    },
    content: {
      type: "string",
      default: "source",
      choices: ["source", "fixture"],
      help: "source: text that packs ~1.8:1; fixture: dev/harness' near-copies",
    },
  },

  async setup(ctx) {
    const f = ctx.flags;
    const server = await startGitServer();
    ctx.defer(() => server.stop());
    const files = Math.round((f["tree-mb"] * 1024 * 1024) / (32 * 1024));
    log(`building a ${f["tree-mb"]} MB tree (${files} files of 32 KiB, ${f.content} content)`);
    const bare = join(server.root, "big.git");
    let newCommit: (i: number) => Promise<void>;
    if (f.content === "fixture") {
      const repo = await RepoBuilder.create(server.root, "big.git");
      ctx.defer(() => repo.dispose());
      await repo.addHistory({
        commits: 2,
        files,
        fileBytes: 32 * 1024,
        filesPerCommit: 10,
        taskPath: "task.yaml",
      });
      await repo.push();
      newCommit = async (i) => {
        repo.write("task.yaml", `apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: bench-${i}\n`);
        repo.write(`history/0/f${i}.txt`, `changed ${i}\n`);
        await repo.commit(`bench ${i}`);
        await repo.push();
      };
    } else {
      await initBare(bare);
      await fastImport(
        bare,
        historyCommits({
          files,
          fileBytes: 32 * 1024,
          commits: 1,
          filesPerCommit: 10,
          taskPath: "task.yaml",
        }),
      );
      newCommit = async (i) => {
        const changed = { "task.yaml": taskYaml(`bench-${i}`), [bulkPath("history", i)]: `changed ${i}\n` };
        await commitFiles(bare, "main", changed, `bench ${i}`);
      };
    }
    const sizes = await repoSizes(bare);
    log(`repository: ${(sizes.packBytes / 1e6).toFixed(1)} MB packed, ${sizes.objects} objects`);
    return { url: server.url("big.git"), newCommit, sizes };
  },

  phases: (ctx, { url, newCommit }) =>
    onePhase("engines", async () => {
      const rows: { engine: string; phase: string; samples: Sample[] }[] = [];
      for (const engine of ["tekton", "quarry"]) {
        const cold: Sample[] = [];
        const next: Sample[] = [];
        const hot: Sample[] = [];
        for (let r = 0; r < ctx.flags.runs && !ctx.signal.aborted; r++) {
          const cache = mkdtempSync(join(tmpdir(), "quarry-bench-cache-"));
          cold.push(await measure(engine, url, cache));
          await newCommit(r + (engine === "tekton" ? 0 : 100));
          next.push(await measure(engine, url, cache));
          hot.push(await measure(engine, url, cache));
          rmSync(cache, { recursive: true, force: true });
        }
        rows.push(
          { engine, phase: "cold", samples: cold },
          { engine, phase: "new commit", samples: next },
          { engine, phase: "hot", samples: hot },
        );
      }
      return rows;
    }),

  result: (ctx, { sizes }, [rows = []]) => ({
    benchmark: "git-engines",
    date: new Date().toISOString(),
    params: { treeMb: ctx.flags["tree-mb"], runs: ctx.flags.runs, content: ctx.flags.content },
    repository: sizes,
    medians: rows.map(({ engine, phase, samples }) => ({
      engine,
      phase,
      wallMs: Math.round(median(samples.map((s) => s.wallMs))),
      largestGitMiB: Number((median(samples.map((s) => s.gitPeakKiB)) / 1024).toFixed(1)),
      nodeGrowthMiB:
        engine === "quarry"
          ? Math.round(median(samples.map((s) => s.nodeKiB ?? Number.NaN)) / 1024)
          : undefined,
    })),
  }),

  report: (r) =>
    markdownTable(
      [
        "engine",
        "phase",
        "wall (median ms)",
        "peak RSS of the largest git process (MB)",
        "node RSS growth (MB)",
      ],
      r.medians.map((m) => [m.engine, m.phase, m.wallMs, m.largestGitMiB, m.nodeGrowthMiB ?? ""]),
    ),
  ok: (r, ctx) => r.medians.length === 6 && !ctx.signal.aborted,
});
