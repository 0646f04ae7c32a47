// The GitSource Quarry runs: refs resolved in-process (one HTTP request per
// lookup, concurrent lookups shared: refs/), objects moved by the git binary
// as child processes (off the event loop) into the on-disk cache and read
// back through one long-lived process per repository (objects/). This file
// builds the steps from the options; pipeline.ts runs them, in order.
//
// A second read of the same commit does no fetch; a read of an already-read
// file is answered from memory. Because cached objects were fetched with
// somebody's credentials, every read first proves the caller's own
// credentials can read the repository (cached for a minute per URL and
// credential), so one tenant's token never serves another tenant.
import type { Logger } from "@quarry/observability";
import { LRUCache } from "lru-cache";
import { RemoteGit } from "./git/remote-git.ts";
import { BlobRead } from "./objects/blob-read.ts";
import { ObjectCache } from "./objects/object-cache.ts";
import { ObjectFetch } from "./objects/object-fetch.ts";
import { ObjectReaders } from "./objects/object-reader.ts";
import type { ParsedTree } from "./objects/tree-objects.ts";
import { type PipelineSteps, readFile, resolveRef } from "./pipeline.ts";
import { AccessProofs } from "./refs/access.ts";
import { RefDiscovery } from "./refs/ref-discovery.ts";
import { RefLookup } from "./refs/ref-lookup.ts";
import type { Revision } from "./refs/revision.ts";
import type { FileRead, GitSource, SourceRequest } from "./source.ts";
import { newSourceStats, type SourceStats } from "./stats.ts";

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

export class GitCliSource implements GitSource {
  readonly cache: ObjectCache;
  readonly stats: SourceStats = newSourceStats();
  private readonly steps: PipelineSteps;

  constructor(opts: GitCliSourceOptions) {
    const now = opts.now ?? Date.now;
    const { stats } = this;
    const discovery = opts.refs ?? new RefDiscovery();
    const access = new AccessProofs({ discovery, stats, ttlMs: opts.accessTtlMs, now, log: opts.log });
    const readers = new ObjectReaders();
    this.cache = new ObjectCache({
      root: opts.cacheRoot,
      now,
      onEvict: (url, bytes, dir) => {
        readers.retire(dir);
        stats.evictions++;
        opts.log?.info({ url, bytes }, "evicted repository from the git object cache");
      },
    });
    const fetch = new ObjectFetch({
      cache: this.cache,
      readers,
      git: new RemoteGit(opts.maxConcurrentGit ?? 8),
      stats,
      repackPackCount: opts.repackPackCount,
      log: opts.log,
    });
    this.steps = {
      refs: new RefLookup({ discovery, access, stats }),
      access,
      cache: this.cache,
      fetch,
      readers,
      trees: new LRUCache<string, ParsedTree>({
        maxSize: 200_000,
        sizeCalculation: (t) => Math.max(1, t.size),
      }),
      blobs: new BlobRead({ fetch, stats, batchWindowMs: opts.blobBatchWindowMs }),
      results: new LRUCache<string, FileRead>({
        maxSize: opts.resultCacheBytes ?? 64 * 1024 * 1024,
        sizeCalculation: (v) => Math.max(1, v.bytes.byteLength),
      }),
      stats,
      maxFileBytes: opts.maxFileBytes,
      maxCacheBytes: opts.maxCacheBytes,
      log: opts.log,
    };
  }

  resolveRevision(url: string, revision: Extract<Revision, { kind: "ref" }>, req: SourceRequest) {
    return resolveRef(this.steps, url, revision, req);
  }

  readFile(url: string, commit: string, path: string, req: SourceRequest): Promise<FileRead> {
    return readFile(this.steps, url, commit, path, req);
  }
}
