// What the engine did, for metrics (src/metrics.ts) and tests. One object, shared
// by the steps that do the work, each counting its own.
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

export function newSourceStats(): SourceStats {
  return {
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
}
