// Measuring git work for benchmarks: every git process's peak RSS (a `git` on
// PATH that runs the real one under /usr/bin/time), a process tree's memory
// sampled from /proc, the CPU of reaped children, resetting a process's peak
// RSS, and the two ways of reading one file that Quarry is compared with:
// Tekton's git resolver and a plain `git clone --depth 1`.
import { execFile, execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
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
import { promisify } from "node:util";
import { descendantsOf } from "@quarry/devcluster/descendants";
import { clkTck, vmKiB } from "./proc.ts";
import { log } from "./run.ts";
import { round } from "./stats.ts";

/** The git processes that ended in a window, as GitTimeShim saw them. */
export interface GitFigures {
  processes: number;
  /** the largest peak RSS of one git process (GNU time's %M), MiB */
  largestMiB: number;
  largestCommand: string;
  /** processes by subcommand */
  byCommand: Record<string, number>;
}

/** GNU time records each git process's peak RSS; Debian ships it as the `time` package. */
export async function ensureTime(): Promise<void> {
  if (existsSync("/usr/bin/time")) return;
  log("/usr/bin/time is missing: installing the `time` package");
  await run("apt-get", ["install", "-y", "-q", "time"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (!existsSync("/usr/bin/time")) throw new Error("/usr/bin/time is needed (apt-get install time)");
}

/**
 * A directory holding a `git` that runs the real git under /usr/bin/time and
 * appends one line per process to a log. Put `dir` first on a process's PATH.
 * Costs a shell and a `time` process per git call (a few ms).
 */
export class GitTimeShim {
  readonly dir = mkdtempSync(join(tmpdir(), "quarry-bench-git-shim-"));
  private readonly logFile = join(this.dir, "git-processes.log");
  private consumed = 0;

  constructor() {
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    writeFileSync(this.logFile, "");
    // %M max RSS (KiB), %C command line (no credentials in the benchmarks)
    writeFileSync(
      join(this.dir, "git"),
      `#!/bin/sh\nexec /usr/bin/time -a -o '${this.logFile}' -f '%M\t%C' '${real}' "$@"\n`,
    );
    chmodSync(join(this.dir, "git"), 0o755);
  }

  /** PATH with the shim first. */
  path(base = process.env.PATH ?? "/usr/bin:/bin"): string {
    return `${this.dir}:${base}`;
  }

  /** The git processes that ended since the last call. */
  take(): GitFigures {
    const lines = readFileSync(this.logFile, "utf8").split("\n");
    const out: GitFigures = { processes: 0, largestMiB: 0, largestCommand: "", byCommand: {} };
    let largestKiB = -1;
    for (const line of lines.slice(this.consumed)) {
      const [rss, cmdline] = line.split("\t");
      if (!rss || !cmdline || !/^\d+$/.test(rss)) continue;
      const command = subcommand(cmdline);
      const name = command.split(" ")[0] ?? "?";
      out.processes++;
      out.byCommand[name] = (out.byCommand[name] ?? 0) + 1;
      if (Number(rss) > largestKiB) [largestKiB, out.largestCommand] = [Number(rss), command];
    }
    out.largestMiB = round(Math.max(0, largestKiB) / 1024, 1);
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
  while (i < words.length && words[i]!.startsWith("-"))
    i += ["--git-dir", "-C", "-c"].includes(words[i]!) ? 2 : 1;
  return words.slice(i).join(" ").slice(0, 80);
}

const readOr = <T>(read: () => T, fallback: T): T => {
  try {
    return read();
  } catch {
    return fallback;
  }
};

/** Proportional set size (KiB) of a process: shared pages split between their users, so sums add up. */
const pssKiB = (pid: number): number | undefined => {
  const m = /^Pss:\s+(\d+) kB/m.exec(readOr(() => readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"), ""));
  return m ? Number(m[1]) : undefined;
};

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
      if (readOr(() => readFileSync(`/proc/${d}/comm`, "utf8"), "").startsWith("git"))
        this.maxGitKiB = Math.max(this.maxGitKiB, vmKiB(d, "VmRSS") ?? 0);
    }
    this.samples++;
    this.maxTreeKiB = Math.max(this.maxTreeKiB, sum);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

/** Bytes of the files under `dir`, counted synchronously. */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readOr(() => readdirSync(dir, { withFileTypes: true, recursive: true }), [])) {
    if (e.isFile()) total += readOr(() => statSync(join(e.parentPath, e.name)).size, 0);
  }
  return total;
}

/**
 * CPU seconds (user + system) of the children `pid` has waited for, and
 * theirs (cutime + cstime in /proc/<pid>/stat): for a service, the git
 * processes it ran; for the driver, the fixture server's `git http-backend`s.
 */
export function reapedChildrenCpuSeconds(pid: number): number {
  const text = readOr(() => readFileSync(`/proc/${pid}/stat`, "utf8"), "");
  if (!text) return Number.NaN;
  const rest = text
    .slice(text.lastIndexOf(")") + 2)
    .trim()
    .split(" ");
  // fields 16 and 17 (cutime, cstime); rest[0] is field 3
  return (Number(rest[13]) + Number(rest[14])) / clkTck();
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0: `5` to /proc/<pid>/clear_refs); false if not allowed. */
export function resetPeakRss(pid: number): boolean {
  return readOr(() => {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  }, false);
}

/** Runs a command asynchronously (the fixture git server answers from this process); its stdout. */
export const run = async (
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string | undefined>; signal?: AbortSignal } = {},
): Promise<string> => (await promisify(execFile)(cmd, args, { ...opts, maxBuffer: 256 << 20 })).stdout;

/**
 * Reads `pathInRepo` at `revision` of `url` without Quarry, from a fresh directory:
 * - `tekton`: what Tekton's git resolver does per request: a shallow clone without checkout, a
 *   fetch of the revision, its checkout; it removes the clone before it answers, so that is timed.
 *   It keeps nothing between requests: cold, new commit and hot cost the same;
 * - `clone`: `git clone --depth 1 --branch <revision>` (with checkout); removing it is not timed.
 * Returns the time and the size of the clone's `.git` (measured untimed); `path`: PATH for git.
 */
export async function readWithoutQuarry(
  way: "tekton" | "clone",
  url: string,
  revision: string,
  pathInRepo: string,
  opts: { path?: string; signal?: AbortSignal } = {},
): Promise<{ ms: number; gitDirBytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), `quarry-bench-${way}-`));
  // no user config, no prompts
  const env = {
    ...process.env,
    ...(opts.path ? { PATH: opts.path } : {}),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
  };
  const o = { env, ...(opts.signal ? { signal: opts.signal } : {}) };
  const t0 = performance.now();
  try {
    if (way === "clone") {
      await run("git", ["clone", "--quiet", "--depth", "1", "--branch", revision, "--", url, dir], o);
    } else {
      await run("git", ["clone", "--quiet", "--depth=1", "--no-checkout", "--", url, dir], o);
      await run("git", ["-C", dir, "fetch", "--quiet", "origin", "--depth=1", "--", revision], o);
      await run("git", ["-C", dir, "checkout", "--quiet", "FETCH_HEAD"], o);
    }
    readFileSync(join(dir, pathInRepo));
    const read = performance.now();
    const gitDirBytes = dirBytes(join(dir, ".git"));
    const untimed = performance.now() - read;
    if (way === "clone") return { ms: read - t0, gitDirBytes };
    rmSync(dir, { recursive: true, force: true });
    return { ms: performance.now() - t0 - untimed, gitDirBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
