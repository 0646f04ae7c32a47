// The engine's one path, forward. Each step is owned by one module; this file
// only runs them in order:
//
//   1. ref → commit          refs/ref-lookup.ts     (resolveRef; skipped for a full commit id)
//   2. commit → its trees    objects/object-fetch.ts (fetched into the blob-filtered cache once)
//   3. commit → tree entry   objects/tree-objects.ts, objects/tree-walk.ts (symlinks followed)
//   4. tree entry → blob     objects/blob-read.ts   (a missing blob fetched in a batch)
//
// In front of 2–4: the access proof (refs/access.ts), since cached objects
// were fetched with somebody's credentials, and the in-memory cache of files
// read before, by (url, commit, path).
import { MAX_RESOLVED_DATA_BYTES } from "@quarry/api";
import type { Logger } from "@quarry/observability";
import type { LRUCache } from "lru-cache";
import type { BlobRead } from "./objects/blob-read.ts";
import type { ObjectCache } from "./objects/object-cache.ts";
import type { ObjectFetch } from "./objects/object-fetch.ts";
import type { ObjectReaders } from "./objects/object-reader.ts";
import { type ParsedTree, treeObjectsReader } from "./objects/tree-objects.ts";
import { resolveInTree } from "./objects/tree-walk.ts";
import type { AccessProofs } from "./refs/access.ts";
import type { RefLookup } from "./refs/ref-lookup.ts";
import { formatOf, type Revision } from "./refs/revision.ts";
import type { FileRead, SourceRequest } from "./source.ts";
import type { SourceStats } from "./stats.ts";

export interface PipelineSteps {
  refs: RefLookup;
  access: AccessProofs;
  cache: ObjectCache;
  fetch: ObjectFetch;
  readers: ObjectReaders;
  /** Parsed trees by object id, shared by every read. */
  trees: LRUCache<string, ParsedTree>;
  blobs: BlobRead;
  /** Files read before, by (url, commit, path). */
  results: LRUCache<string, FileRead>;
  stats: Pick<SourceStats, "memoryHits">;
  /** Largest file returned (default: the 1 MiB limit on resolved data). */
  maxFileBytes?: number | undefined;
  /** Budget for the whole on-disk cache unless a request says otherwise. */
  maxCacheBytes?: number | undefined;
  log?: Logger | undefined;
}

/** Step 1: the commit a branch, tag or ref names on the remote now. */
export function resolveRef(
  steps: PipelineSteps,
  url: string,
  revision: Extract<Revision, { kind: "ref" }>,
  req: SourceRequest,
): Promise<string> {
  return steps.refs.resolve(url, revision, req);
}

/** Steps 2–4: a file's bytes at a commit, after proving the caller may read the repository. */
export async function readFile(
  steps: PipelineSteps,
  url: string,
  commit: string,
  path: string,
  req: SourceRequest,
): Promise<FileRead> {
  await steps.access.check(url, req);
  const key = JSON.stringify([url, commit, path]);
  const hit = steps.results.get(key);
  if (hit) {
    steps.stats.memoryHits++;
    return hit;
  }
  const format = formatOf(commit);
  const repo = await steps.cache.acquire(url, format, req.signal);
  try {
    // 2. the commit and its trees into the cache
    await steps.fetch.commit(repo, commit, req);
    const reader = steps.readers.for(repo.dir, format);
    const blobs = steps.blobs.of(repo, reader, req);
    // 3. the tree entry at `path`, symlinks followed (their targets are blobs)
    const tree = treeObjectsReader({ reader, format, trees: steps.trees, blobs }, commit, url);
    const found = await resolveInTree(tree, path);
    // 4. its blob
    const bytes = await blobs.read(found.entry.oid, path, steps.maxFileBytes ?? MAX_RESOLVED_DATA_BYTES);
    const result: FileRead = { bytes, resolvedPath: found.path };
    steps.results.set(key, result);
    return result;
  } finally {
    repo.release();
    const budget = req.maxCacheBytes ?? steps.maxCacheBytes ?? 2 * 1024 ** 3;
    void steps.cache.evict(budget).catch((err: unknown) => {
      steps.log?.warn({ err: String(err) }, "git object cache eviction failed");
    });
  }
}
