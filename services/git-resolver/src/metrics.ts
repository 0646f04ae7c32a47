// The git engine's own metrics, next to the runtime's quarry_resolution_*:
// what the on-disk cache holds and how often requests reached the remote.
import type { Meter } from "@quarry/observability";
import type { GitCliSource } from "./engine/git-cli-source.ts";

export function registerGitMetrics(meter: Meter, source: GitCliSource): void {
  const bytes = meter.createObservableGauge("quarry_git_cache_bytes", {
    description: "Bytes of the on-disk git object cache",
    unit: "By",
  });
  bytes.addCallback((r) => r.observe(source.cache.totalBytes()));
  const repos = meter.createObservableGauge("quarry_git_cache_repositories", {
    description: "Repositories in the on-disk git object cache",
  });
  repos.addCallback((r) => r.observe(source.cache.repositories()));
  const ops = meter.createObservableCounter("quarry_git_operations_total", {
    description:
      "Git engine work by operation: fetch (a commit's trees), blob (a file read from the cache, fetched if missing), blob_fetch (a fetch of a batch of missing blobs), blob_fetched (blobs asked for by those), repack, ref_lookup (lookups sent to the server; concurrent ones are shared), memory_hit, access_check, eviction",
  });
  ops.addCallback((r) => {
    const s = source.stats;
    r.observe(s.fetches, { operation: "fetch" });
    r.observe(s.blobReads, { operation: "blob" });
    r.observe(s.blobFetches, { operation: "blob_fetch" });
    r.observe(s.blobsFetched, { operation: "blob_fetched" });
    r.observe(s.repacks, { operation: "repack" });
    r.observe(s.refLookups, { operation: "ref_lookup" });
    r.observe(s.memoryHits, { operation: "memory_hit" });
    r.observe(s.accessChecks, { operation: "access_check" });
    r.observe(s.evictions, { operation: "eviction" });
  });
}
