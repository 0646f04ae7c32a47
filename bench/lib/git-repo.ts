// Git repositories for the git benchmarks, written straight into bare
// repositories with `git fast-import` (no work tree, no push): generated text
// that compresses like source code (about 1.8:1 with zlib, and no two files
// share long runs, so git's delta compression finds nothing either), large
// histories cached across runs, and new commits on branches.
//
// Not dev/harness' addHistory: its files are shifted copies of one short text,
// so a "156 MB" tree packs into a few MB (git deltas one file against another).
// Benchmarks about bytes on the wire need content that stays large when packed.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { git } from "@quarry/devcluster/git-repos";
import { log } from "./run.ts";
import { round } from "./stats.ts";

/** mulberry32: a small, fast, well-mixed 32-bit generator (deterministic per seed). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** 4096 pseudo-words of 2–10 letters. */
const WORDS: readonly Buffer[] = (() => {
  const next = rng(42);
  const letters = "abcdefghijklmnopqrstuvwxyz_";
  return Array.from({ length: 4096 }, () => {
    let w = "";
    for (let j = 2 + (next() % 9); j > 0; j--) w += letters[next() % letters.length];
    return Buffer.from(w);
  });
})();
const SEPARATORS = [" ", " ", " ", " ", ".", "(", ")", ", ", " = ", ";\n", "\n", "\n  ", ": "];

/** `bytes` of source-like text, the same for the same seed on every machine. */
export function sourceText(seed: number, bytes: number): Buffer {
  const next = rng(Math.imul(seed, 0x9e3779b1) ^ 0x5bd1e995);
  const out = Buffer.alloc(bytes);
  let at = 0;
  while (at < bytes) {
    const v = next();
    at += WORDS[v & 4095]!.copy(out, at);
    if (at < bytes) at += out.write(SEPARATORS[(v >>> 12) % SEPARATORS.length]!, at);
  }
  return out;
}

/** A Tekton Task named `name` whose step echoes `note`. */
export function taskYaml(name: string, note = name): string {
  return `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: ${name}
spec:
  steps:
    - name: run
      image: busybox
      script: echo ${JSON.stringify(note)}
`;
}

const IDENT = "Quarry Bench <bench@quarry.invalid>";

type FileData = string | Buffer;

/** One commit of a fast-import stream. */
interface ImportCommit {
  /** full ref, e.g. refs/heads/main */
  ref: string;
  message: string;
  /** seconds since the epoch */
  when: number;
  /**
   * parent: a commit id, or `<ref>^0` to continue a branch that exists in the repository. Omitted: a
   * root commit, or the next commit of a branch this stream already wrote to.
   */
  from?: string;
  files: Iterable<[path: string, data: FileData]>;
}

async function* importStream(commits: Iterable<ImportCommit>): AsyncGenerator<Buffer | string> {
  for (const c of commits) {
    yield `commit ${c.ref}\ncommitter ${IDENT} ${c.when} +0000\ndata ${Buffer.byteLength(c.message)}\n${c.message}\n`;
    if (c.from) yield `from ${c.from}\n`;
    for (const [path, data] of c.files) {
      yield `M 100644 inline ${path}\ndata ${Buffer.byteLength(data)}\n`;
      yield data;
      yield "\n";
    }
  }
}

/** Runs `git fast-import` on a bare repository; commits are generated lazily (a large history never sits in memory). */
export async function fastImport(gitDir: string, commits: Iterable<ImportCommit>): Promise<void> {
  await git(["--git-dir", gitDir, "fast-import", "--quiet"], { input: importStream(commits) });
}

export async function initBare(gitDir: string): Promise<void> {
  mkdirSync(gitDir, { recursive: true });
  await git(["init", "--quiet", "--bare", "--initial-branch=main", gitDir]);
}

export function revParse(gitDir: string, rev: string): Promise<string> {
  return git(["--git-dir", gitDir, "rev-parse", "--verify", rev]);
}

/** Commits `files` on top of `branch` (created from `from` when given); returns the new commit id. */
export async function commitFiles(
  gitDir: string,
  branch: string,
  files: Record<string, FileData>,
  message: string,
  from = `refs/heads/${branch}^0`,
): Promise<string> {
  const ref = `refs/heads/${branch}`;
  await fastImport(gitDir, [
    { ref, message, when: Math.floor(Date.now() / 1000), from, files: Object.entries(files) },
  ]);
  return revParse(gitDir, ref);
}

/** Path of the i-th file of a generated tree: 100 files per directory. */
export const bulkPath = (dir: string, i: number) => `${dir}/${Math.floor(i / 100)}/f${i}.txt`;

export interface HistoryOptions {
  /** files in the tip tree (all written by the first commit) */
  files: number;
  fileBytes: number;
  /** commits after the first */
  commits: number;
  /** files rewritten by each later commit (with new content) */
  filesPerCommit: number;
  /** directory of the generated files (default "history") */
  dir?: string;
  /** also write a Task at this path in every commit (named history-<n>) */
  taskPath?: string;
}

/** `1 + commits` commits on refs/heads/main: the first writes every file, each later one rewrites `filesPerCommit` of them. */
export function* historyCommits(opts: HistoryOptions, startWhen = 1_700_000_000): Generator<ImportCommit> {
  let seed = 1;
  function* files(c: number): Generator<[string, FileData]> {
    if (opts.taskPath) yield [opts.taskPath, taskYaml(`history-${c}`)];
    const touched = c === 0 ? opts.files : Math.min(opts.filesPerCommit, opts.files);
    for (let i = 0; i < touched; i++) {
      const file = c === 0 ? i : ((c - 1) * opts.filesPerCommit + i) % opts.files;
      yield [bulkPath(opts.dir ?? "history", file), sourceText(seed++, opts.fileBytes)];
    }
  }
  // later commits continue the branch fast-import is building (a `from` would read the repository's ref)
  for (let c = 0; c <= opts.commits; c++)
    yield { ref: "refs/heads/main", message: `history ${c}`, when: startWhen + c * 60, files: files(c) };
}

/**
 * A repository of `treeMb` MB of `fileKib` KiB files, then `commits` commits rewriting `historyMb`
 * MB of them, `task.yaml` in every commit, kept as `<prefix>-<files>x<KiB>k-<commits>x<perCommit>.git`
 * under $QUARRY_CACHE/bench (default ~/.cache/quarry/bench). Built on first use into a temporary
 * directory renamed into place once complete, so an interrupted build is never reused.
 */
export async function cachedHistory(
  prefix: string,
  o: { treeMb: number; historyMb: number; fileKib: number; commits: number },
) {
  const files = Math.max(1, Math.round((o.treeMb * 1024) / o.fileKib));
  const perCommit = Math.max(1, Math.ceil((o.historyMb * 1024) / o.fileKib / o.commits));
  const key = `${prefix}-${files}x${o.fileKib}k-${o.commits}x${perCommit}`;
  const root = join(process.env.QUARRY_CACHE ?? join(homedir(), ".cache", "quarry"), "bench");
  const [gitDir, tmp] = [join(root, `${key}.git`), join(root, `${key}.tmp-${process.pid}.git`)];
  const t0 = performance.now();
  const cached = existsSync(gitDir) && (await revParse(gitDir, "refs/heads/main").catch(() => undefined));
  if (!cached) {
    log(
      `generating ${key}: ${files} files of ${o.fileKib} KiB, then ${o.commits} commits rewriting ${perCommit}`,
    );
    rmSync(gitDir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
    try {
      await initBare(tmp);
      const history = { files, fileBytes: o.fileKib * 1024, commits: o.commits, filesPerCommit: perCommit };
      await fastImport(tmp, historyCommits({ ...history, taskPath: "task.yaml" }));
      renameSync(tmp, gitDir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const seconds = round((performance.now() - t0) / 1000, 1);
  log(`${key} ${cached ? "cached" : "generated"} in ${seconds} s`);
  return { gitDir, built: !cached, seconds, key, files, perCommit };
}

/**
 * Serves a cached repository without copying it: a bare repository at
 * `<serverRoot>/<name>` whose objects come from the cached one (git
 * alternates) and whose refs are a copy, so commits made during a run never
 * reach the cache.
 */
export async function serveShared(cached: string, serverRoot: string, name: string): Promise<string> {
  const dest = join(serverRoot, name);
  await git(["clone", "--quiet", "--bare", "--shared", cached, dest]);
  return dest;
}

/** Sizes of a repository's object store (git count-objects). */
export async function repoSizes(gitDir: string): Promise<{ packBytes: number; objects: number }> {
  const out = await git(["--git-dir", gitDir, "count-objects", "-v"]);
  const field = (k: string) => Number(new RegExp(`^${k}: (\\d+)`, "m").exec(out)?.[1] ?? Number.NaN);
  return {
    packBytes: field("size-pack") * 1024 + field("size") * 1024,
    objects: field("in-pack") + field("count"),
  };
}
