// Moving objects into the blob-filtered cache with the git binary: a commit's
// trees (no blobs) when it is first read, missing blobs in batches
// (blob-read.ts collects them), and a repack once fetches have left too many
// packs. One fetch at a time per repository (its lock); the repository is
// dropped when a fetch makes it outgrow max-repository-size.
//
//   git fetch --depth=1 --filter=blob:none origin +<commit>:refs/quarry/c/<commit>
//   git fetch --filter=blob:none --stdin  (missing blobs, many per fetch)
//   git repack -a -d                      (once fetched blobs make too many packs)
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "@quarry/observability";
import { pinnedResolve } from "../git/git-pin.ts";
import { lastLine } from "../git/git-process.ts";
import { type RemoteGit, remoteFailure } from "../git/remote-git.ts";
import { GitSourceError, type SourceRequest } from "../source.ts";
import type { SourceStats } from "../stats.ts";
import { commitRef, duBytes, type ObjectCache, type RepoHandle } from "./object-cache.ts";
import type { ObjectReaders } from "./object-reader.ts";

export interface ObjectFetchOptions {
  cache: ObjectCache;
  readers: ObjectReaders;
  git: RemoteGit;
  stats: Pick<SourceStats, "fetches" | "blobFetches" | "blobsFetched" | "repacks">;
  /** Packs in a repository past which it is repacked into one (default 32; 0 never). */
  repackPackCount?: number | undefined;
  log?: Logger | undefined;
}

export class ObjectFetch {
  private readonly opts: ObjectFetchOptions;

  constructor(opts: ObjectFetchOptions) {
    this.opts = opts;
  }

  /** Fetches a commit's trees (no blobs) unless they are here; one fetch at a time per repository. */
  async commit(repo: RepoHandle, commit: string, req: SourceRequest): Promise<void> {
    if (await repo.hasCommit(commit)) return;
    await repo.exclusive(req.signal, async () => {
      if (await repo.hasCommit(commit)) return;
      this.opts.stats.fetches++;
      const pin = await pinnedResolve(repo.url, req);
      const res = await this.withSizeLimit(repo, req, (signal) =>
        this.opts.git.run(repo, { ...req, pin }, signal, [
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
      if (res.code !== 0) throw remoteFailure(repo.url, res.stderr, `commit ${commit}`, req);
    });
  }

  /** What git's own lazy fetch runs, for many blobs at once; one fetch at a time per repository. */
  async blobs(repo: RepoHandle, oids: string[], req: SourceRequest): Promise<void> {
    await repo.exclusive(req.signal, async () => {
      this.opts.stats.blobFetches++;
      this.opts.stats.blobsFetched += oids.length;
      const pin = await pinnedResolve(repo.url, req);
      const res = await this.withSizeLimit(repo, req, (signal) =>
        this.opts.git.run(
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
          `${oids.join("\n")}\n`,
        ),
      );
      if (res.code !== 0) throw remoteFailure(repo.url, res.stderr, `object ${oids[0]}`, req);
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
        this.opts.stats.repacks++;
        const res = await this.opts.git.run(
          repo,
          { auth: undefined, signal: AbortSignal.timeout(10 * 60_000) },
          AbortSignal.timeout(10 * 60_000),
          ["repack", "-a", "-d", "-q", "--no-write-bitmap-index"],
        );
        if (res.code !== 0)
          this.opts.log?.warn({ url: repo.url, err: lastLine(res.stderr) }, "git repack failed");
        // the reader re-scans packs on a miss; a fresh process drops the handles of deleted ones
        this.opts.readers.retire(repo.dir);
        await this.opts.cache.measure(repo);
      });
    } catch (err) {
      this.opts.log?.warn({ url: repo.url, err: String(err) }, "git repack failed");
    }
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
      await this.opts.cache.measure(repo);
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
      if ((await this.opts.cache.measure(repo)) > max) over.abort(new Error("repository too large"));
      if (!over.signal.aborted) return out;
    } catch (err) {
      if (!over.signal.aborted) throw err;
    } finally {
      clearInterval(timer);
    }
    this.opts.readers.retire(repo.dir);
    await this.opts.cache.drop(repo);
    throw new GitSourceError(
      "repo-too-large",
      `${repo.url} is over max-repository-size (${formatBytes(max)}) in the cache`,
    );
  }
}

async function packCount(dir: string): Promise<number> {
  try {
    return (await readdir(join(dir, "objects", "pack"))).filter((f) => f.endsWith(".pack")).length;
  } catch {
    return 0;
  }
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3 && n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GiB`;
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
