// Measuring git work for benchmarks: every git process's peak RSS (a `git` on
// PATH that runs the real one under /usr/bin/time), a process tree's memory
// sampled from /proc, the CPU of reaped children, resetting a process's peak
// RSS, and the two ways of reading one file that Quarry is compared with:
// Tekton's git resolver and a plain `git clone --depth 1`.
import { spawn } from "node:child_process";
import {
  accessSync,
  chmodSync,
  constants,
  type Dirent,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { clkTck, vmKiB } from "./proc.ts";

export interface GitProcessRecord {
  /** peak RSS of that process (KiB; GNU time's %M) */
  maxRssKiB: number;
  wallSeconds: number;
  /** the git subcommand (argv after `git` and its global options) */
  command: string;
}

/**
 * A directory holding a `git` that runs the real git under /usr/bin/time and
 * appends one line per process to a log. Put `dir` first on a process's PATH.
 * Costs a shell and a `time` process per git call (a few ms).
 */
export class GitTimeShim {
  readonly dir: string;
  readonly logFile: string;
  private consumed = 0;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "quarry-bench-git-shim-"));
    this.logFile = join(this.dir, "git-processes.log");
    const real = findOnPath("git");
    writeFileSync(this.logFile, "");
    // %M max RSS (KiB), %e wall seconds, %C command line (no credentials in the benchmarks)
    writeFileSync(
      join(this.dir, "git"),
      `#!/bin/sh\nexec /usr/bin/time -a -o '${this.logFile}' -f '%M\t%e\t%C' '${real}' "$@"\n`,
    );
    chmodSync(join(this.dir, "git"), 0o755);
  }

  /** PATH with the shim first. */
  path(base = process.env.PATH ?? "/usr/bin:/bin"): string {
    return `${this.dir}:${base}`;
  }

  /** Processes that ended since the last call. */
  take(): GitProcessRecord[] {
    const lines = readFileSync(this.logFile, "utf8").split("\n");
    const out: GitProcessRecord[] = [];
    for (const line of lines.slice(this.consumed)) {
      const [rss, wall, cmd] = line.split("\t");
      if (!rss || !cmd || !/^\d+$/.test(rss)) continue;
      out.push({ maxRssKiB: Number(rss), wallSeconds: Number(wall), command: subcommand(cmd) });
    }
    this.consumed = Math.max(this.consumed, lines.length - 1);
    return out;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `git --git-dir x -c a=b fetch --depth=1 …` → `fetch --depth=1 …` (first 80 characters). */
function subcommand(cmdline: string): string {
  const words = cmdline.split(" ").slice(1);
  let i = 0;
  while (i < words.length && words[i]!.startsWith("-")) {
    i += ["--git-dir", "-C", "-c"].includes(words[i]!) ? 2 : 1;
  }
  return words.slice(i).join(" ").slice(0, 80);
}

function findOnPath(bin: string): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const p = join(dir || ".", bin);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  throw new Error(`${bin} not found on PATH`);
}

/** Direct children of every thread of `pid` (/proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/)) {
        if (c) out.push(Number(c));
      }
    } catch {}
  }
  return out;
}

/** All descendants of `pid` (not `pid` itself). */
export function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const queue = childrenOf(pid);
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...childrenOf(p));
  }
  return out;
}

/** Proportional set size (KiB) of a process: shared pages split between their users, so sums add up. */
function pssKiB(pid: number): number | undefined {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * Samples a process and its descendants every `intervalMs`: the largest sum of
 * their PSS (what a container holding them uses, shared pages counted once;
 * a child forked but not yet exec'd shares the parent's pages and adds
 * little), the largest VmRSS of a single git process (comm `git*`), and how
 * many distinct descendants were seen. Processes shorter than the interval
 * can be missed: a lower bound.
 */
export class TreeRssSampler {
  maxTreeKiB = 0;
  maxGitKiB = 0;
  samples = 0;
  private readonly seen = new Set<number>();
  private readonly timer: NodeJS.Timeout;
  private readonly pid: number;

  constructor(pid: number, intervalMs = 50) {
    this.pid = pid;
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  get descendantsSeen(): number {
    return this.seen.size;
  }

  sample(): void {
    const own = pssKiB(this.pid);
    if (own === undefined) return;
    let sum = own;
    for (const d of descendantsOf(this.pid)) {
      this.seen.add(d);
      sum += pssKiB(d) ?? 0;
      if (commOf(d).startsWith("git")) {
        const rss = vmKiB(d, "VmRSS") ?? 0;
        if (rss > this.maxGitKiB) this.maxGitKiB = rss;
      }
    }
    this.samples++;
    if (sum > this.maxTreeKiB) this.maxTreeKiB = sum;
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

/**
 * Bytes of the files under `dir`, counted synchronously. (Not the git
 * resolver's duBytes: `total += (await stat(f)).size` inside Promise.all reads
 * `total` before each await, so it keeps about one file's size.)
 */
export function dirBytes(dir: string): number {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (!e.isFile()) continue;
    try {
      total += statSync(join(e.parentPath, e.name)).size;
    } catch {}
  }
  return total;
}

/**
 * CPU seconds (user + system) of the children `pid` has waited for, and
 * theirs (cutime + cstime in /proc/<pid>/stat): for a service, the git
 * processes it ran; for the driver, the fixture server's `git http-backend`s.
 */
export function reapedChildrenCpuSeconds(pid: number): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return Number.NaN;
  }
  const rest = text
    .slice(text.lastIndexOf(")") + 2)
    .trim()
    .split(" ");
  // fields 16 and 17 (cutime, cstime); rest[0] is field 3
  return (Number(rest[13]) + Number(rest[14])) / clkTck();
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0: `5` to /proc/<pid>/clear_refs); false if not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

export interface Timed<T> {
  ms: number;
  value: T;
}

/** Runs a command asynchronously (the fixture git server answers from this process), failing on a non-zero exit. */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; signal?: AbortSignal } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      if (err.length < 8192) err += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(" ")} exited ${code}: ${err.trim()}`));
    });
  });
}

/** Environment for git run by the benchmark itself (no user config, no prompts; `path` puts a shim first). */
export function benchGitEnv(path?: string): Record<string, string | undefined> {
  return {
    ...process.env,
    ...(path ? { PATH: path } : {}),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
  };
}

export interface WayOptions {
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** called with the work tree once the file is read, before it is removed; not timed */
  inspect?: (dir: string) => void;
}

/** Runs `inspect` and returns how long it took, so it can be left out of a timing. */
function untimed(dir: string, inspect: ((dir: string) => void) | undefined): number {
  if (!inspect) return 0;
  const t0 = performance.now();
  inspect(dir);
  return performance.now() - t0;
}

/**
 * Tekton's git resolver, per request: a fresh shallow clone without checkout,
 * a fetch of the revision, a checkout of it, read the file, remove the clone
 * (the resolver removes its directory before it answers, so the time
 * includes that). It keeps nothing between requests, so cold, new commit and
 * hot cost the same.
 */
export async function tektonWay(
  url: string,
  revision: string,
  pathInRepo: string,
  opts: WayOptions = {},
): Promise<Timed<Buffer>> {
  const dir = mkdtempSync(join(tmpdir(), "quarry-bench-tekton-"));
  const env = opts.env ?? benchGitEnv();
  const t0 = performance.now();
  try {
    const o = { env, ...(opts.signal ? { signal: opts.signal } : {}) };
    await run("git", ["clone", "--quiet", "--depth=1", "--no-checkout", "--", url, dir], o);
    await run("git", ["-C", dir, "fetch", "--quiet", "origin", "--depth=1", "--", revision], o);
    await run("git", ["-C", dir, "checkout", "--quiet", "FETCH_HEAD"], o);
    const value = readFileSync(join(dir, pathInRepo));
    const skipped = untimed(dir, opts.inspect);
    rmSync(dir, { recursive: true, force: true });
    return { ms: performance.now() - t0 - skipped, value };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `git clone --depth 1 --branch <branch>` (with checkout), then read the file; removing the clone is not timed. */
export async function shallowClone(
  url: string,
  branch: string,
  pathInRepo: string,
  opts: WayOptions = {},
): Promise<Timed<Buffer>> {
  const dir = mkdtempSync(join(tmpdir(), "quarry-bench-clone-"));
  const env = opts.env ?? benchGitEnv();
  const t0 = performance.now();
  try {
    await run("git", ["clone", "--quiet", "--depth", "1", "--branch", branch, "--", url, dir], {
      env,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const value = readFileSync(join(dir, pathInRepo));
    const ms = performance.now() - t0;
    untimed(dir, opts.inspect);
    return { ms, value };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
