// Running the git binary: in its own process group (so an abort kills git
// and the helpers it forks: remote-https, index-pack, a lazy fetch), with a
// hermetic environment, credentials only in the environment (never argv,
// never logged), a cap on how much output is kept, and a bound on how many
// git processes run at once.
import { spawn } from "node:child_process";
import { basicAuthHeader } from "../credentials.ts";
import type { GitAuth } from "../source.ts";
import { GitSourceError } from "../source.ts";

export interface GitRun {
  /** Repository (--git-dir); omitted for commands that need none. */
  gitDir?: string;
  args: string[];
  signal: AbortSignal;
  env?: Record<string, string>;
  /** Keep at most this many bytes of stdout; the process is killed past it and `truncated` set. */
  maxStdout?: number;
  /** Written to stdin (closed after); stdin is empty otherwise. */
  input?: string;
}

export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  truncated: boolean;
}

/** Config every git call gets: no user/system config, no prompts, http(s) only, stable messages. */
export function gitBaseEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "/bin/false",
    SSH_ASKPASS: "/bin/false",
    GIT_ALLOW_PROTOCOL: "http:https",
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_LITERAL_PATHSPECS: "1",
    GIT_HTTP_USER_AGENT: "git/quarry-git-resolver",
  };
  // No proxy variables from the process: the resolver decides per URL (config, then the
  // process's HTTPS_PROXY/NO_PROXY) and remoteEnv passes only that decision.
  return env;
}

/**
 * Environment that makes git send credentials, use (or not) a proxy and trust
 * extra CAs for one URL. The header goes through GIT_CONFIG_* (git >= 2.31),
 * scoped to the repository URL so a redirect to another host never carries
 * it. `proxy` is the decision for this URL (no-proxy already applied); unset
 * means direct, whatever the environment says. `caFile` holds the public
 * roots plus the configured CAs (GIT_SSL_CAINFO replaces git's roots).
 * `resolve` pins the host to the addresses blocked-networks was checked
 * against (curl's CURLOPT_RESOLVE, `host:port:addr[,addr]`, git >= 2.37), so
 * git does not resolve the name again; git follows no redirect at all.
 */
export function remoteEnv(
  url: string,
  opts: {
    auth?: GitAuth | undefined;
    proxy?: string | undefined;
    caFile?: string | undefined;
    resolve?: string | undefined;
  },
): Record<string, string> {
  // a redirect to another host would go unchecked (and git's default follows the first one)
  const config: [string, string][] = [["http.followRedirects", "false"]];
  if (opts.resolve) config.push(["http.curloptResolve", opts.resolve]);
  if (opts.auth) config.push([`http.${url}.extraHeader`, `Authorization: ${basicAuthHeader(opts.auth)}`]);
  const env: Record<string, string> = {};
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  env.GIT_CONFIG_COUNT = String(config.length);
  if (opts.proxy) {
    env.http_proxy = opts.proxy;
    env.https_proxy = opts.proxy;
    env.HTTPS_PROXY = opts.proxy;
  }
  if (opts.caFile) {
    env.GIT_SSL_CAINFO = opts.caFile;
    env.GIT_PROXY_SSL_CAINFO = opts.caFile;
  }
  return env;
}

/** At most `limit` git processes at once; the rest wait in order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

const MAX_STDERR = 64 * 1024;

export function runGit(run: GitRun): Promise<GitResult> {
  const { signal } = run;
  if (signal.aborted) return Promise.reject(abortError(signal));
  const args = run.gitDir ? ["--git-dir", run.gitDir, ...run.args] : run.args;
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      env: { ...gitBaseEnv(), ...run.env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    // git may exit before reading it all (a failed fetch): that is not this process's error
    child.stdin.on("error", () => {});
    child.stdin.end(run.input ?? "");
    const out: Buffer[] = [];
    let outBytes = 0;
    let truncated = false;
    let stderr = "";
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const onAbort = () => killGroup();
    signal.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (c: Buffer) => {
      if (truncated) return;
      const max = run.maxStdout ?? Number.POSITIVE_INFINITY;
      if (outBytes + c.length > max) {
        out.push(c.subarray(0, max - outBytes));
        outBytes = max;
        truncated = true;
        killGroup();
        return;
      }
      out.push(c);
      outBytes += c.length;
    });
    child.stderr.on("data", (c: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += c.toString("utf8");
    });
    child.on("error", (err) => {
      signal.removeEventListener("abort", onAbort);
      reject(new GitSourceError("unavailable", `cannot run git: ${err.message}`, { cause: err }));
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) reject(abortError(signal));
      else resolve({ code, stdout: Buffer.concat(out), stderr, truncated });
    });
  });
}

function abortError(signal: AbortSignal): GitSourceError {
  const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
  return new GitSourceError("aborted", `git work aborted: ${why}`, { cause: signal.reason });
}

/**
 * What a failed git network command's stderr means. Git prints the same
 * "could not read Username" for a missing and a rejected token (it asks for
 * credentials either way), so both are "auth".
 */
export function classifyGitFailure(
  stderr: string,
): "repo-not-found" | "revision-not-found" | "auth" | "tls" | "proxy-refused" | "unavailable" {
  // curl's words for a certificate it cannot trust (OpenSSL and GnuTLS builds)
  if (
    /SSL certificate problem|server certificate verification failed|certificate verify failed|no alternative certificate subject name|SSL: certificate subject name/i.test(
      stderr,
    )
  ) {
    return "tls";
  }
  if (/CONNECT tunnel failed|from proxy after CONNECT|Proxy CONNECT aborted/i.test(stderr))
    return "proxy-refused";
  if (/repository '.*' not found|returned error: 404/i.test(stderr)) return "repo-not-found";
  if (
    /could not read (Username|Password)|Authentication failed|returned error: 40[13]|terminal prompts disabled/i.test(
      stderr,
    )
  ) {
    return "auth";
  }
  if (
    /not our ref|couldn't find remote ref|no such remote ref|unadvertised object|bad object|is not a valid/i.test(
      stderr,
    )
  ) {
    return "revision-not-found";
  }
  return "unavailable";
}

/** The last meaningful line of git's stderr, for a message (credentials never reach stderr). */
export function lastLine(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("hint:"));
  return lines.at(-1) ?? "no output";
}

/** The git binary's version; throws when it is missing or older than 2.37 (http.curloptResolve). */
export async function checkGitVersion(): Promise<string> {
  const res = await runGit({ args: ["--version"], signal: AbortSignal.timeout(10_000) });
  const m = /git version (\d+)\.(\d+)/.exec(res.stdout.toString());
  if (res.code !== 0 || !m) throw new Error(`cannot run git: ${res.stderr.trim() || "no version"}`);
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < 2 || (major === 2 && minor < 37))
    throw new Error(`git ${m[1]}.${m[2]} is too old; 2.37 or newer is needed (http.curloptResolve)`);
  return `${m[1]}.${m[2]}`;
}
