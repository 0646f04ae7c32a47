// The bundle resolver's own metrics, next to the runtime's quarry_resolution_*:
// how often the digest-addressed cache saved a registry fetch.
import type { Meter } from "@quarry/observability";
import type { BundleResolver } from "./resolver.ts";

export function registerBundleMetrics(meter: Meter, resolver: BundleResolver): void {
  const bytes = meter.createObservableGauge("quarry_bundle_cache_bytes", {
    description: "Bytes held by the digest-addressed cache, by what (manifest, layer)",
    unit: "By",
  });
  bytes.addCallback((r) => {
    r.observe(resolver.manifests.size, { what: "manifest" });
    r.observe(resolver.layers.size, { what: "layer" });
  });
  const lookups = meter.createObservableCounter("quarry_bundle_cache_lookups_total", {
    description:
      "Digest cache lookups by what (manifest, layer) and result (hit, miss; a miss may join an in-flight fetch)",
  });
  lookups.addCallback((r) => {
    for (const [what, cache] of [
      ["manifest", resolver.manifests],
      ["layer", resolver.layers],
    ] as const) {
      r.observe(cache.hits, { what, result: "hit" });
      r.observe(cache.misses, { what, result: "miss" });
    }
  });
}
