// Git engine benchmark: reading one file from a repository whose tip tree is
// large (default 156 MB), served by the fixture smart-HTTP server on loopback,
// engine against engine (no Kubernetes: bench/git-large-history.ts measures
// the same through the real service).
//
//   node bench/git-engines.ts [--tree-mb 156] [--runs 3] [--content source|fixture]
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
// about 1.8:1 (bench/lib/git-repo.ts); --content fixture uses e2e/fixtures'
// addHistory, whose files are near-copies of each other, so the 156 MB tree
// packs into a few MB (how the figures in services/git-resolver/README.md
// were made).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { startGitServer } from "@quarry/devcluster/git-server";
import { GitCliSource } from "../services/git-resolver/src/git-cli-source.ts";
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

const { values } = parseArgs({
  options: {
    phase: { type: "string" },
    engine: { type: "string" },
    url: { type: "string" },
    cache: { type: "string" },
    "tree-mb": { type: "string", default: "156" },
    runs: { type: "string", default: "3" },
    content: { type: "string", default: "source" },
  },
});

if (values.phase) {
  await runPhase(values.engine ?? "", values.url ?? "", values.cache ?? "");
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
    const out = await run(
      process.execPath,
      [import.meta.filename, "--phase", "x", "--engine", engine, "--url", url, "--cache", cache],
      { env: { ...process.env, PATH: shim.path() } },
    );
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const treeMb = Number(values["tree-mb"]);
const runs = Number(values.runs);
const content = values.content;
if (content !== "source" && content !== "fixture") throw new Error(`--content must be source or fixture`);
const server = await startGitServer();
const files = Math.round((treeMb * 1024 * 1024) / (32 * 1024));
console.error(`building a ${treeMb} MB tree (${files} files of 32 KiB, ${content} content)...`);
const bare = join(server.root, "big.git");
let newCommit: (i: number) => Promise<void>;
let builder: RepoBuilder | undefined;
if (content === "fixture") {
  const repo = await RepoBuilder.create(server.root, "big.git");
  builder = repo;
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
    historyCommits({ files, fileBytes: 32 * 1024, commits: 1, filesPerCommit: 10, taskPath: "task.yaml" }),
  );
  newCommit = async (i) => {
    await commitFiles(
      bare,
      "main",
      { "task.yaml": taskYaml(`bench-${i}`), [bulkPath("history", i)]: `changed ${i}\n` },
      `bench ${i}`,
    );
  };
}
const sizes = await repoSizes(bare);
console.error(`repository: ${(sizes.packBytes / 1e6).toFixed(1)} MB packed, ${sizes.objects} objects`);
const url = server.url("big.git");

const rows: [string, string, Sample[]][] = [];
for (const engine of ["tekton", "quarry"]) {
  const cold: Sample[] = [];
  const next: Sample[] = [];
  const hot: Sample[] = [];
  for (let r = 0; r < runs; r++) {
    const cache = mkdtempSync(join(tmpdir(), "quarry-bench-cache-"));
    cold.push(await measure(engine, url, cache));
    await newCommit(r + (engine === "tekton" ? 0 : 100));
    next.push(await measure(engine, url, cache));
    hot.push(await measure(engine, url, cache));
    rmSync(cache, { recursive: true, force: true });
  }
  rows.push([engine, "cold", cold], [engine, "new commit", next], [engine, "hot", hot]);
}

console.log(
  "| engine | phase | wall (median ms) | peak RSS of the largest git process (MB) | node RSS growth (MB) |",
);
console.log("|---|---|---|---|---|");
for (const [engine, phase, samples] of rows) {
  const node =
    samples[0]?.nodeKiB === undefined
      ? ""
      : (median(samples.map((s) => s.nodeKiB ?? Number.NaN)) / 1024).toFixed(0);
  console.log(
    `| ${engine} | ${phase} | ${median(samples.map((s) => s.wallMs)).toFixed(0)} | ${(median(samples.map((s) => s.gitPeakKiB)) / 1024).toFixed(1)} | ${node} |`,
  );
}
builder?.dispose();
await server.stop();
