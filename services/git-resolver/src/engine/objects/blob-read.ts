// The pipeline's last step, tree entry → blob: a blob's bytes from the cache
// through the repository's object reader, within a size limit. The cache is
// blob-filtered, so a blob may be missing: it is then fetched in a batch with
// the other blobs missing at the same time (blob-batcher.ts, object-fetch.ts)
// and read again.
import { credentialHash } from "../credentials.ts";
import { GitSourceError, type SourceRequest } from "../source.ts";
import type { SourceStats } from "../stats.ts";
import { BlobBatcher } from "./blob-batcher.ts";
import type { RepoHandle } from "./object-cache.ts";
import { formatBytes, type ObjectFetch } from "./object-fetch.ts";
import type { ObjectReader } from "./object-reader.ts";

export interface BlobReadOptions {
  fetch: ObjectFetch;
  stats: Pick<SourceStats, "blobReads">;
  /** How long a missing blob waits for others to fetch with (default 5 ms). */
  batchWindowMs?: number | undefined;
}

/** The blobs of one repository, as one request reads them. */
export interface RepoBlobs {
  /** `path` is what a too-large message calls the blob. */
  read(oid: string, path: string, maxBytes: number): Promise<Uint8Array>;
}

export class BlobRead {
  private readonly batches: BlobBatcher;
  private readonly opts: BlobReadOptions;

  constructor(opts: BlobReadOptions) {
    this.opts = opts;
    this.batches = new BlobBatcher({ windowMs: opts.batchWindowMs ?? 5 });
  }

  /** Blobs of `repo` read through `reader`, missing ones fetched with `req`'s credentials. */
  of(repo: RepoHandle, reader: ObjectReader, req: SourceRequest): RepoBlobs {
    return { read: (oid, path, maxBytes) => this.read(repo, reader, oid, path, req, maxBytes) };
  }

  /** A blob's bytes from the cache; a missing blob is fetched in a batch with others (BlobBatcher). */
  async read(
    repo: RepoHandle,
    reader: ObjectReader,
    oid: string,
    path: string,
    req: SourceRequest,
    maxBytes: number,
  ): Promise<Uint8Array> {
    this.opts.stats.blobReads++;
    let info = await reader.info(oid);
    if (!info) {
      // one batch per repository and credential: a batch runs with one caller's credentials
      const key = `${repo.dir}\n${credentialHash(req)}`;
      await this.batches.add(key, oid, req.signal, (oids, signal) =>
        this.opts.fetch.blobs(repo, oids, { ...req, signal }),
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
}
