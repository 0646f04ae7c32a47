// The GitSource Quarry runs: refs resolved in-process (one HTTP request per
// lookup, concurrent lookups shared: ref-discovery.ts, fresh-coalescer.ts),
// objects moved by the git binary as child processes (off the event loop)
// into the on-disk cache and read back through one long-lived process per
// repository:
//
//   git fetch --depth=1 --filter=blob:none origin +<commit>:refs/quarry/c/<commit>
//   git cat-file --batch-command          (commits, trees, blobs: object-reader.ts)
//   git fetch --filter=blob:none --stdin  (missing blobs, many per fetch: blob-batcher.ts)
//   git repack -a -d                      (once fetched blobs make too many packs)
//
// A second read of the same commit does no fetch; a read of an already-read
// file is answered from memory. Because cached objects were fetched with
// somebody's credentials, every read first proves the caller's own
// credentials can read the repository (cached for a minute per URL and
// credential), so one tenant's token never serves another tenant.
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { MAX_RESOLVED_DATA_BYTES } from "@quarry/api";
import type { Logger } from "@quarry/observability";
import { redactUrl } from "@quarry/resolver-sdk";
import { LRUCache } from "lru-cache";
import { BlobBatcher } from "./blob-batcher.ts";
import { caFileFor } from "./ca-file.ts";
import { FreshCoalescer } from "./fresh-coalescer.ts";
import { pinnedResolve } from "./git-pin.ts";
import { classifyGitFailure, lastLine, remoteEnv, runGit, Semaphore } from "./git-process.ts";
import { commitRef, duBytes, ObjectCache, type RepoHandle } from "./object-cache.ts";
import { ObjectReader } from "./object-reader.ts";
import { RefDiscovery } from "./ref-discovery.ts";
import { formatOf, type Revision } from "./revision.ts";
import {
  type FileRead,
  type GitSource,
  GitSourceError,
  resolveInTree,
  type SourceRequest,
} from "./source.ts";
import { type ParsedTree, treeObjectsReader } from "./tree-objects.ts";

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
  /** How long a missing blob waits for others to fetch with (default 5 ms). */
  blobBatchWindowMs?: number;
  /** Packs in a repository past which it is repacked into one (default 32; 0 never). */
  repackPackCount?: number;
  refs?: RefDiscovery;
  now?: () => number;
  log?: Logger;
}

/** What the engine did for a read, for metrics and tests. */
export interface SourceStats {
  fetches: number;
  blobReads: number;
  /** Fetches of missing blobs (each for a batch of them), and the blobs they asked for. */
  blobFetches: number;
  blobsFetched: number;
  repacks: number;
  /** Ref lookups sent to the server (concurrent requests share one). */
  refLookups: number;
  memoryHits: number;
  accessChecks: number;
  evictions: number;
}

export class GitCliSource implements GitSource {
  readonly cache: ObjectCache;
  readonly stats: SourceStats = {
    fetches: 0,
    blobReads: 0,
    blobFetches: 0,
    blobsFetched: 0,
    repacks: 0,
    refLookups: 0,
    memoryHits: 0,
    accessChecks: 0,
    evictions: 0,
  };
  private readonly refs: RefDiscovery;
  private readonly results: LRUCache<string, FileRead>;
  /** accessKey → time the credentials were last proven to read the repository. */
  private readonly access = new Map<string, number>();
  private readonly checking = new Map<string, Promise<void>>();
  /** Concurrent lookups of one ref by one tenant with one credential share a server round trip. */
  readonly refLookups = new FreshCoalescer<string>();
  private readonly blobBatches: BlobBatcher;
  /** One cat-file process per repository directory. */
  private readonly readers = new Map<string, ObjectReader>();
  private readonly trees = new LRUCache<string, ParsedTree>({
    maxSize: 200_000,
    sizeCalculation: (t) => Math.max(1, t.size),
  });
  private readonly gate: Semaphore;
  private readonly opts: GitCliSourceOptions;
  private readonly now: () => number;

  constructor(opts: GitCliSourceOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.refs = opts.refs ?? new RefDiscovery();
    this.gate = new Semaphore(opts.maxConcurrentGit ?? 8);
    this.blobBatches = new BlobBatcher({ windowMs: opts.blobBatchWindowMs ?? 5 });
    this.cache = new ObjectCache({
      root: opts.cacheRoot,
      now: this.now,
      onEvict: (url, bytes, dir) => {
        this.retireReader(dir);
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
    // a lookup that started after this request arrived answers it (FreshCoalescer): never staler
    // than asking alone; the key holds everything the answer may depend on, credentials hashed
    const key = JSON.stringify([
      url,
      revision.name,
      req.scope ?? "",
      credentialHash(req),
      req.proxy ?? "",
      req.caBundle ? createHash("sha256").update(req.caBundle).digest("hex") : "",
      req.blockedNetworks?.text ?? "",
    ]);
    const lookup = (signal: AbortSignal) => {
      this.stats.refLookups++;
      return this.refs.resolve(url, revision.name, { ...req, signal });
    };
    const commit = await this.refLookups.run(key, req.signal, lookup, req.refLookupIntervalMs);
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
      const format = formatOf(commit);
      const reader = this.reader(repo, format);
      const blob = (oid: string, shown: string, max: number) =>
        this.readBlob(repo, reader, oid, shown, req, max);
      const trees = treeObjectsReader(
        { reader, format, trees: this.trees, blob: (oid, max) => blob(oid, oid, max) },
        commit,
        url,
      );
      const found = await resolveInTree(trees, path);
      const bytes = await blob(found.entry.oid, path, this.opts.maxFileBytes ?? MAX_RESOLVED_DATA_BYTES);
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
      const pin = await pinnedResolve(repo.url, req);
      const res = await this.withSizeLimit(repo, req, (signal) =>
        this.git(repo, { ...req, pin }, signal, [
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

  private reader(repo: RepoHandle, format: "sha1" | "sha256"): ObjectReader {
    let r = this.readers.get(repo.dir);
    if (!r) {
      r = new ObjectReader(repo.dir, format);
      this.readers.set(repo.dir, r);
    }
    return r;
  }

  private retireReader(dir: string): void {
    this.readers.get(dir)?.retire();
    this.readers.delete(dir);
  }

  /** A blob's bytes from the cache; a missing blob is fetched in a batch with others (BlobBatcher). */
  private async readBlob(
    repo: RepoHandle,
    reader: ObjectReader,
    oid: string,
    path: string,
    req: SourceRequest,
    maxBytes: number,
  ): Promise<Uint8Array> {
    this.stats.blobReads++;
    let info = await reader.info(oid);
    if (!info) {
      // one batch per repository and credential: a batch runs with one caller's credentials
      const key = `${repo.dir}\n${credentialHash(req)}`;
      await this.blobBatches.add(key, oid, req.signal, (oids, signal) =>
        this.fetchBlobs(repo, oids, { ...req, signal }),
      );
      info = await reader.info(oid);
      if (!info) throw new GitSourceError("revision-not-found", `object ${oid} not found in ${repo.url}`);
    }
    if (info.size > maxBytes) {
      throw new GitSourceError(
        "file-too-large",
        `${JSON.stringify(path)} is over the ${formatBytes(maxBytes)} limit for resolved data`,
      );
    }
    const o = await reader.contents(oid);
    if (!o) throw new GitSourceError("revision-not-found", `object ${oid} not found in ${repo.url}`);
    return new Uint8Array(o.bytes.buffer, o.bytes.byteOffset, o.bytes.byteLength);
  }

  /** What git's own lazy fetch runs, for many blobs at once; one fetch at a time per repository. */
  private async fetchBlobs(repo: RepoHandle, oids: string[], req: SourceRequest): Promise<void> {
    await repo.exclusive(req.signal, async () => {
      this.stats.blobFetches++;
      this.stats.blobsFetched += oids.length;
      const pin = await pinnedResolve(repo.url, req);
      const res = await this.withSizeLimit(repo, req, (signal) =>
        this.git(
          repo,
          { ...req, pin },
          signal,
          [
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
            "origin",
          ],
          undefined,
          `${oids.join("\n")}\n`,
        ),
      );
      if (res.code !== 0) throw this.failure(repo.url, res.stderr, `object ${oids[0]}`, req);
    });
    void this.maybeRepack(repo);
  }

  /**
   * Every fetch leaves a pack, and every object lookup searches them all:
   * past `repackPackCount` the repository is repacked into one (promisor
   * objects stay promisor), under the fetch lock so no fetch runs meanwhile.
   */
  private async maybeRepack(repo: RepoHandle): Promise<void> {
    const limit = this.opts.repackPackCount ?? 32;
    if (limit <= 0 || (await packCount(repo.dir)) <= limit) return;
    try {
      await repo.exclusive(AbortSignal.timeout(10 * 60_000), async () => {
        if ((await packCount(repo.dir)) <= limit) return;
        this.stats.repacks++;
        const res = await this.git(
          repo,
          { auth: undefined, signal: AbortSignal.timeout(10 * 60_000) },
          AbortSignal.timeout(10 * 60_000),
          ["repack", "-a", "-d", "-q", "--no-write-bitmap-index"],
        );
        if (res.code !== 0)
          this.opts.log?.warn({ url: repo.url, err: lastLine(res.stderr) }, "git repack failed");
        // the reader re-scans packs on a miss; a fresh process drops the handles of deleted ones
        this.retireReader(repo.dir);
        await this.cache.measure(repo);
      });
    } catch (err) {
      this.opts.log?.warn({ url: repo.url, err: String(err) }, "git repack failed");
    }
  }

  /** Runs git for a repository; `req.pin` is the checked-address entry of a network command (git-pin.ts). */
  private git(
    repo: RepoHandle,
    req: SourceRequest & { pin?: string | undefined },
    signal: AbortSignal,
    args: string[],
    maxStdout?: number,
    input?: string,
  ) {
    const env = remoteEnv(repo.url, {
      auth: req.auth,
      proxy: req.proxy,
      caFile: caFileFor(req.caBundle),
      resolve: req.pin,
    });
    return this.gate.run(() =>
      runGit({
        gitDir: repo.dir,
        args,
        signal,
        env,
        ...(maxStdout === undefined ? {} : { maxStdout }),
        ...(input === undefined ? {} : { input }),
      }),
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
    this.retireReader(repo.dir);
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
  return `${url}\n${credentialHash(req)}`;
}

function credentialHash(req: SourceRequest): string {
  if (!req.auth) return "anonymous";
  return createHash("sha256")
    .update(JSON.stringify([req.auth.username, req.auth.token]))
    .digest("hex");
}

async function packCount(dir: string): Promise<number> {
  try {
    return (await readdir(join(dir, "objects", "pack"))).filter((f) => f.endsWith(".pack")).length;
  } catch {
    return 0;
  }
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3 && n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GiB`;
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
