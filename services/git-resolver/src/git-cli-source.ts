// The GitSource Quarry runs: refs resolved in-process (isomorphic-git,
// ref-discovery.ts), objects moved by the git binary as child processes (off
// the event loop) into the on-disk cache:
//
//   git fetch --depth=1 --filter=blob:none origin +<commit>:refs/quarry/c/<commit>
//   git ls-tree <commit> -- <path>       (trees are local after the fetch)
//   git cat-file blob <oid>              (git fetches just that blob, once)
//
// A second read of the same commit does no fetch; a read of an already-read
// file is answered from memory. Because cached objects were fetched with
// somebody's credentials, every read first proves the caller's own
// credentials can read the repository (cached for a minute per URL and
// credential), so one tenant's token never serves another tenant.
import { createHash } from "node:crypto";
import { MAX_RESOLVED_DATA_BYTES } from "@quarry/api";
import type { Logger } from "@quarry/observability";
import { redactUrl } from "@quarry/resolver-sdk";
import { LRUCache } from "lru-cache";
import { caFileFor } from "./ca-file.ts";
import { classifyGitFailure, lastLine, remoteEnv, runGit, Semaphore } from "./git-process.ts";
import { commitRef, duBytes, ObjectCache, type RepoHandle } from "./object-cache.ts";
import { RefDiscovery } from "./ref-discovery.ts";
import { formatOf, type Revision } from "./revision.ts";
import {
  type FileRead,
  type GitSource,
  GitSourceError,
  resolveInTree,
  type SourceRequest,
  type TreeEntry,
  type TreeReader,
} from "./source.ts";

export interface GitCliSourceOptions {
  /** Directory of the on-disk cache (one bare repository per URL). */
  cacheRoot: string;
  /** Budget for the whole cache unless a request says otherwise (SourceRequest.maxCacheBytes). */
  maxCacheBytes?: number;
  /** Largest file returned (default: the 1 MiB limit on resolved data). */
  maxFileBytes?: number;
  /** In-memory cache of file contents by (url, commit, path). */
  resultCacheBytes?: number;
  /** How long a successful access check for (url, credentials) is trusted. */
  accessTtlMs?: number;
  /** Git processes at once. */
  maxConcurrentGit?: number;
  refs?: RefDiscovery;
  now?: () => number;
  log?: Logger;
}

/** What the engine did for a read, for metrics and tests. */
export interface SourceStats {
  fetches: number;
  blobReads: number;
  memoryHits: number;
  accessChecks: number;
  evictions: number;
}

export class GitCliSource implements GitSource {
  readonly cache: ObjectCache;
  readonly stats: SourceStats = { fetches: 0, blobReads: 0, memoryHits: 0, accessChecks: 0, evictions: 0 };
  private readonly refs: RefDiscovery;
  private readonly results: LRUCache<string, FileRead>;
  /** accessKey → time the credentials were last proven to read the repository. */
  private readonly access = new Map<string, number>();
  private readonly checking = new Map<string, Promise<void>>();
  private readonly gate: Semaphore;
  private readonly opts: GitCliSourceOptions;
  private readonly now: () => number;

  constructor(opts: GitCliSourceOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.refs = opts.refs ?? new RefDiscovery();
    this.gate = new Semaphore(opts.maxConcurrentGit ?? 8);
    this.cache = new ObjectCache({
      root: opts.cacheRoot,
      now: this.now,
      onEvict: (url, bytes) => {
        this.stats.evictions++;
        opts.log?.info({ url, bytes }, "evicted repository from the git object cache");
      },
    });
    this.results = new LRUCache<string, FileRead>({
      maxSize: opts.resultCacheBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (v) => Math.max(1, v.bytes.byteLength),
    });
  }

  async resolveRevision(url: string, revision: Extract<Revision, { kind: "ref" }>, req: SourceRequest) {
    const commit = await this.refs.resolve(url, revision.name, req);
    this.access.set(accessKey(url, req), this.now());
    return commit;
  }

  async readFile(url: string, commit: string, path: string, req: SourceRequest): Promise<FileRead> {
    await this.checkAccess(url, req);
    const key = JSON.stringify([url, commit, path]);
    const hit = this.results.get(key);
    if (hit) {
      this.stats.memoryHits++;
      return hit;
    }
    const repo = await this.cache.acquire(url, formatOf(commit), req.signal);
    try {
      await this.ensureCommit(repo, commit, req);
      const found = await resolveInTree(this.treeReader(repo, commit, req), path);
      const bytes = await this.readBlob(
        repo,
        found.entry.oid,
        path,
        req,
        this.opts.maxFileBytes ?? MAX_RESOLVED_DATA_BYTES,
      );
      const result: FileRead = { bytes, resolvedPath: found.path };
      this.results.set(key, result);
      return result;
    } finally {
      repo.release();
      const budget = req.maxCacheBytes ?? this.opts.maxCacheBytes ?? 2 * 1024 ** 3;
      void this.cache.evict(budget).catch((err: unknown) => {
        this.opts.log?.warn({ err: String(err) }, "git object cache eviction failed");
      });
    }
  }

  /**
   * The caller's credentials must be able to read the repository before
   * anything cached from it is handed out. When the server cannot be reached,
   * credentials that were proven before still read the cache (stale, not wrong).
   */
  private async checkAccess(url: string, req: SourceRequest): Promise<void> {
    const key = accessKey(url, req);
    const proven = this.access.get(key);
    if (proven !== undefined && this.now() - proven < (this.opts.accessTtlMs ?? 60_000)) return;
    // concurrent reads with the same credentials share one check
    let pending = this.checking.get(key);
    if (!pending) {
      this.stats.accessChecks++;
      pending = this.refs
        .checkAccess(url, req)
        .then(() => {
          this.access.set(key, this.now());
        })
        .finally(() => this.checking.delete(key));
      this.checking.set(key, pending);
    }
    try {
      await pending;
    } catch (err) {
      if (err instanceof GitSourceError && err.code === "unavailable" && proven !== undefined) {
        this.opts.log?.warn(
          { url, err: err.message },
          "git server unreachable; serving the cache to proven credentials",
        );
        return;
      }
      throw err;
    }
  }

  /** Fetches a commit's trees (no blobs) unless they are here; one fetch at a time per repository. */
  private async ensureCommit(repo: RepoHandle, commit: string, req: SourceRequest): Promise<void> {
    if (await repo.hasCommit(commit)) return;
    await repo.exclusive(req.signal, async () => {
      if (await repo.hasCommit(commit)) return;
      this.stats.fetches++;
      const res = await this.withSizeLimit(repo, req, (signal) =>
        this.git(repo, req, signal, [
          "fetch",
          "--quiet",
          "--no-tags",
          "--no-write-fetch-head",
          "--no-recurse-submodules",
          "--depth=1",
          "--filter=blob:none",
          "origin",
          `+${commit}:${commitRef(commit)}`,
        ]),
      );
      if (res.code !== 0) throw this.failure(repo.url, res.stderr, `commit ${commit}`, req);
    });
  }

  private treeReader(repo: RepoHandle, commit: string, req: SourceRequest): TreeReader {
    return {
      entry: async (path) => {
        const res = await this.git(repo, req, req.signal, [
          "ls-tree",
          "-z",
          "--full-tree",
          commit,
          "--",
          path,
        ]);
        if (res.code !== 0) throw this.failure(repo.url, res.stderr, `commit ${commit}`, req);
        return parseLsTree(res.stdout, path);
      },
      linkTarget: async (oid) => Buffer.from(await this.readBlob(repo, oid, oid, req, 4096)).toString("utf8"),
    };
  }

  /** A blob's bytes; git fetches a missing blob from the remote (partial clone) on the way. */
  private async readBlob(
    repo: RepoHandle,
    oid: string,
    path: string,
    req: SourceRequest,
    maxBytes: number,
  ): Promise<Uint8Array> {
    this.stats.blobReads++;
    const read = (signal: AbortSignal) =>
      this.git(repo, req, signal, ["cat-file", "blob", oid], maxBytes + 1);
    // a blob read before is a loose object (a lazy fetch of one object is never packed): nothing can grow
    const res = (await repo.hasLooseObject(oid))
      ? await read(req.signal)
      : await this.withSizeLimit(repo, req, read);
    if (res.truncated || res.stdout.length > maxBytes) {
      throw new GitSourceError(
        "file-too-large",
        `${JSON.stringify(path)} is over the ${formatBytes(maxBytes)} limit for resolved data`,
      );
    }
    if (res.code !== 0) throw this.failure(repo.url, res.stderr, `object ${oid}`, req);
    return new Uint8Array(res.stdout.buffer, res.stdout.byteOffset, res.stdout.byteLength);
  }

  private git(repo: RepoHandle, req: SourceRequest, signal: AbortSignal, args: string[], maxStdout?: number) {
    const env = remoteEnv(repo.url, { auth: req.auth, proxy: req.proxy, caFile: caFileFor(req.caBundle) });
    return this.gate.run(() =>
      runGit({ gitDir: repo.dir, args, signal, env, ...(maxStdout === undefined ? {} : { maxStdout }) }),
    );
  }

  /**
   * Runs git work that may download into the repository and stops it once the
   * repository outgrows max-repository-size; an oversized repository is dropped.
   */
  private async withSizeLimit<T>(
    repo: RepoHandle,
    req: SourceRequest,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const max = req.maxRepositoryBytes ?? 0;
    if (max <= 0) {
      const out = await fn(req.signal);
      await this.cache.measure(repo);
      return out;
    }
    const over = new AbortController();
    const timer = setInterval(() => {
      void duBytes(repo.dir).then((b) => {
        if (b > max) over.abort(new Error("repository too large"));
      });
    }, 200);
    try {
      const out = await fn(AbortSignal.any([req.signal, over.signal]));
      if ((await this.cache.measure(repo)) > max) over.abort(new Error("repository too large"));
      if (!over.signal.aborted) return out;
    } catch (err) {
      if (!over.signal.aborted) throw err;
    } finally {
      clearInterval(timer);
    }
    await this.cache.drop(repo);
    throw new GitSourceError(
      "repo-too-large",
      `${repo.url} is over max-repository-size (${formatBytes(max)}) in the cache`,
    );
  }

  private failure(url: string, stderr: string, what: string, req: SourceRequest): GitSourceError {
    const code = classifyGitFailure(stderr);
    switch (code) {
      case "repo-not-found":
        return new GitSourceError(code, `repository ${url} not found`);
      case "auth":
        return new GitSourceError(code, `${url} refused the credentials`);
      case "revision-not-found":
        return new GitSourceError(code, `${what} not found in ${url}`);
      case "tls":
        return new GitSourceError(
          code,
          `TLS: the certificate of ${hostOf(url)} is not trusted (${lastLine(stderr)}); add its CA to the git resolver's ca-bundle`,
        );
      case "proxy-refused":
        return new GitSourceError(
          code,
          `proxy ${redactUrl(req.proxy ?? "")} refused to connect to ${hostOf(url)} (${lastLine(stderr)})`,
        );
      default:
        return new GitSourceError(code, `git failed for ${url}: ${lastLine(stderr)}`);
    }
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Access is proven per URL and credential; the key holds a hash, never the token. */
function accessKey(url: string, req: SourceRequest): string {
  if (!req.auth) return `${url}\nanonymous`;
  const h = createHash("sha256").update(`${req.auth.username}:${req.auth.token}`).digest("hex");
  return `${url}\n${h}`;
}

/** One `ls-tree -z` record for exactly `path`: "<mode> <type> <oid>\t<path>\0". */
export function parseLsTree(out: Buffer, path: string): TreeEntry | undefined {
  for (const record of out.toString("utf8").split("\0")) {
    const tab = record.indexOf("\t");
    if (tab < 0 || record.slice(tab + 1) !== path) continue;
    const [mode, type, oid] = record.slice(0, tab).split(" ");
    if (mode && oid && (type === "blob" || type === "tree" || type === "commit")) return { mode, type, oid };
  }
  return undefined;
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3 && n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GiB`;
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
