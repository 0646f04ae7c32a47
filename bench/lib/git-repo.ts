// Git repositories for the git benchmarks, written straight into bare
// repositories with `git fast-import` (no work tree, no push): generated text
// that compresses like source code (about 1.8:1 with zlib, and no two files
// share long runs, so git's delta compression finds nothing either), large
// histories cached across runs, and new commits on branches.
//
// Not dev/harness' addHistory: its file content comes from a generator whose
// states collapse onto one short cycle, so every file is a shifted copy of the
// same text and a "156 MB" tree packs into a few MB (git deltas one file
// against another). Benchmarks that are about bytes on the wire need content
// that stays large when packed.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { git } from "@quarry/devcluster/git-repos";

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
const SEPARATORS: readonly Buffer[] = [
  " ",
  " ",
  " ",
  " ",
  ".",
  "(",
  ")",
  ", ",
  " = ",
  ";\n",
  "\n",
  "\n  ",
  ": ",
].map((s) => Buffer.from(s));

/** `bytes` of source-like text, the same for the same seed on every machine. */
export function sourceText(seed: number, bytes: number): Buffer {
  const next = rng(Math.imul(seed, 0x9e3779b1) ^ 0x5bd1e995);
  const out = Buffer.alloc(bytes);
  let at = 0;
  while (at < bytes) {
    const v = next();
    at += WORDS[v & 4095]!.copy(out, at);
    if (at < bytes) at += SEPARATORS[(v >>> 12) % SEPARATORS.length]!.copy(out, at);
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

export type FileData = string | Buffer;

/** One commit of a fast-import stream. */
export interface ImportCommit {
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
  await fastImport(gitDir, [
    {
      ref: `refs/heads/${branch}`,
      message,
      when: Math.floor(Date.now() / 1000),
      from,
      files: Object.entries(files),
    },
  ]);
  return revParse(gitDir, `refs/heads/${branch}`);
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
export function historyCommits(opts: HistoryOptions, startWhen = 1_700_000_000): Iterable<ImportCommit> {
  const dir = opts.dir ?? "history";
  return (function* () {
    let seed = 1;
    for (let c = 0; c <= opts.commits; c++) {
      const touched = c === 0 ? opts.files : Math.min(opts.filesPerCommit, opts.files);
      const files = (function* (): Generator<[string, FileData]> {
        if (opts.taskPath) yield [opts.taskPath, taskYaml(`history-${c}`)];
        for (let i = 0; i < touched; i++) {
          const file = c === 0 ? i : ((c - 1) * opts.filesPerCommit + i) % opts.files;
          yield [bulkPath(dir, file), sourceText(seed++, opts.fileBytes)];
        }
      })();
      yield {
        ref: "refs/heads/main",
        message: `history ${c}`,
        when: startWhen + c * 60,
        // later commits continue the branch fast-import is building (a `from` would read the repository's ref)
        files,
      };
    }
  })();
}

/** Where generated repositories are kept between runs: $QUARRY_CACHE/bench (default ~/.cache/quarry/bench). */
function benchCacheDir(): string {
  return join(process.env.QUARRY_CACHE ?? join(homedir(), ".cache", "quarry"), "bench");
}

/**
 * A bare repository kept under benchCacheDir() as `<key>.git`, built by
 * `build` on first use (into a temporary directory, renamed into place once
 * complete, so an interrupted build is never reused). Returns its path and
 * whether it was built now.
 */
export async function cachedRepo(
  key: string,
  build: (gitDir: string) => Promise<void>,
): Promise<{ gitDir: string; built: boolean }> {
  const root = benchCacheDir();
  const gitDir = join(root, `${key}.git`);
  if (existsSync(gitDir)) {
    try {
      await revParse(gitDir, "refs/heads/main");
      return { gitDir, built: false };
    } catch {
      rmSync(gitDir, { recursive: true, force: true });
    }
  }
  mkdirSync(root, { recursive: true });
  const tmp = join(root, `${key}.tmp-${process.pid}.git`);
  rmSync(tmp, { recursive: true, force: true });
  try {
    await initBare(tmp);
    await build(tmp);
    renameSync(tmp, gitDir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { gitDir, built: true };
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
