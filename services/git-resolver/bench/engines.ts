// Git engine benchmark: reading one file from a repository whose tip tree is
// large (default 156 MB), served by the fixture smart-HTTP server on loopback.
//
//   node services/git-resolver/bench/engines.ts [--tree-mb 156] [--runs 3]
//
// Compares, for a cold cache, a new commit on the branch, and a hot cache:
//   tekton   Tekton's git resolver: clone --depth=1 --no-checkout, fetch, checkout, read (per request)
//   quarry   GitCliSource (this service): ref discovery in-process, blob-filtered fetch, ls-tree, cat-file
// Each measurement runs in a fresh process: wall time of the operation, the
// peak RSS of the largest git process (every git call goes through a PATH shim
// running it under /usr/bin/time, which counts the helpers git forks), and for
// quarry how much the node process doing the work grew (its peak RSS over the
// RSS it had before the operation: isomorphic-git's ref discovery, buffers).
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { RepoBuilder } from "../../../e2e/fixtures/git-repos.ts";
import { startGitServer } from "../../../e2e/fixtures/git-server.ts";
import { GitCliSource } from "../src/git-cli-source.ts";

const { values } = parseArgs({
  options: {
    phase: { type: "string" },
    engine: { type: "string" },
    url: { type: "string" },
    cache: { type: "string" },
    "tree-mb": { type: "string", default: "156" },
    runs: { type: "string", default: "3" },
  },
});

if (values.phase) {
  await runPhase(values.engine!, values.url!, values.cache!);
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

/** A directory with a `git` that runs the real one under /usr/bin/time, appending its peak RSS (KiB) to a file. */
function gitShim(): { dir: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), "git-shim-"));
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const log = join(dir, "rss.log");
  writeFileSync(join(dir, "git"), `#!/bin/sh\nexec /usr/bin/time -a -o "${log}" -f "%M" "${real}" "$@"\n`);
  chmodSync(join(dir, "git"), 0o755);
  writeFileSync(log, "");
  return { dir, log };
}

/** Runs one phase in a child (asynchronously: the git server answers from this process). */
async function measure(engine: string, url: string, cache: string): Promise<Sample> {
  const shim = gitShim();
  const res = await promisify(execFile)(
    process.execPath,
    [import.meta.filename, "--phase", "x", "--engine", engine, "--url", url, "--cache", cache],
    {
      encoding: "utf8",
      env: { ...process.env, PATH: `${shim.dir}:${process.env.PATH}` },
      maxBuffer: 1 << 24,
    },
  );
  const out = `${res.stdout}\n${res.stderr}`;
  const op = /op-ms ([\d.]+) node-growth-kib (\d+)/.exec(out);
  const rss = readFileSync(shim.log, "utf8").split("\n").filter(Boolean).map(Number);
  rmSync(shim.dir, { recursive: true, force: true });
  return {
    wallMs: Number(op?.[1]),
    gitPeakKiB: Math.max(0, ...rss),
    nodeKiB: engine === "quarry" ? Number(op?.[2]) : undefined,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const treeMb = Number(values["tree-mb"]);
const runs = Number(values.runs);
const server = await startGitServer();
const repo = await RepoBuilder.create(server.root, "big.git");
const files = Math.round((treeMb * 1024 * 1024) / (32 * 1024));
console.error(`building a ${treeMb} MB tree (${files} files of 32 KiB)...`);
await repo.addHistory({ commits: 2, files, fileBytes: 32 * 1024, filesPerCommit: 10, taskPath: "task.yaml" });
await repo.push();
const url = server.url("big.git");

const rows: [string, string, Sample[]][] = [];
async function newCommit(i: number) {
  repo.write("task.yaml", `apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: bench-${i}\n`);
  repo.write(`history/0/f${i}.txt`, `changed ${i}\n`);
  await repo.commit(`bench ${i}`);
  await repo.push();
}

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
    samples[0]?.nodeKiB === undefined ? "" : (median(samples.map((s) => s.nodeKiB!)) / 1024).toFixed(0);
  console.log(
    `| ${engine} | ${phase} | ${median(samples.map((s) => s.wallMs)).toFixed(0)} | ${(median(samples.map((s) => s.gitPeakKiB)) / 1024).toFixed(1)} | ${node} |`,
  );
}
repo.dispose();
await server.stop();
