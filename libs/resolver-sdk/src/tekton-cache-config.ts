// Tekton's resolver-cache-config: the one ConfigMap where Tekton v1.15's users
// size its resolvers' shared cache (max-size entries, ttl). Quarry's own keys
// in a resolver's ConfigMap (cache-size, cache-ttl) say the same per resolver
// and win where both are set; Tekton's fill in what they leave unset; the
// defaults (1000 entries, 5m) are Tekton's too.
import { ConfigError, parseDuration } from "@quarry/kube";
import type { LoadedConfig } from "./config.ts";
import type { ConfigKeys } from "./config-keys.ts";

/** Where Tekton installs it (its resolvers' namespace; RESOLVER_CACHE_CONFIG_MAP_NAME renames it there). */
export const TEKTON_CACHE_CONFIG = {
  namespace: "tekton-pipelines-resolvers",
  name: "resolver-cache-config",
} as const;

export const TEKTON_CACHE_KEYS = { maxSize: "max-size", ttl: "ttl" } as const;

export const tektonCacheConfigKeys: ConfigKeys = { known: Object.values(TEKTON_CACHE_KEYS) };

/** What resolver-cache-config sets; a key left out is undefined. */
export interface TektonCacheSettings {
  maxSize: number | undefined;
  ttlMs: number | undefined;
}

/**
 * max-size (a positive integer) and ttl (a positive Go duration). Tekton falls back to its
 * default on a bad value without a word; here it throws ConfigError naming the key, so the last
 * good settings stay and the ConfigMap gets a Warning Event.
 */
export function parseTektonCacheConfig(data: Readonly<Record<string, string>>): TektonCacheSettings {
  const get = (key: string) => {
    const v = data[key]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const size = get(TEKTON_CACHE_KEYS.maxSize);
  let maxSize: number | undefined;
  if (size !== undefined) {
    maxSize = /^[+-]?\d+$/.test(size) ? Number(size) : Number.NaN;
    if (!Number.isSafeInteger(maxSize) || maxSize < 1)
      throw new ConfigError(TEKTON_CACHE_KEYS.maxSize, `must be a positive integer, got "${size}"`);
  }
  const ttl = get(TEKTON_CACHE_KEYS.ttl);
  let ttlMs: number | undefined;
  if (ttl !== undefined) {
    try {
      ttlMs = parseDuration(ttl.startsWith("+") ? ttl.slice(1) : ttl);
    } catch {
      throw new ConfigError(TEKTON_CACHE_KEYS.ttl, `must be a duration like "5m" or "1h", got "${ttl}"`);
    }
    if (ttlMs <= 0) throw new ConfigError(TEKTON_CACHE_KEYS.ttl, `must be positive, got "${ttl}"`);
  }
  return { maxSize, ttlMs };
}

/**
 * The resolver's loaded config with resolver-cache-config's settings where the resolver's own
 * ConfigMap leaves cache-size / cache-ttl unset (the same object when nothing changes).
 */
export function withTektonCache(loaded: LoadedConfig, tekton: TektonCacheSettings): LoadedConfig {
  const own = (key: string) => (loaded.raw[key]?.trim() ?? "") !== "";
  const cacheSize = own("cache-size")
    ? loaded.runtime.cacheSize
    : (tekton.maxSize ?? loaded.runtime.cacheSize);
  const cacheTtlMs = own("cache-ttl")
    ? loaded.runtime.cacheTtlMs
    : (tekton.ttlMs ?? loaded.runtime.cacheTtlMs);
  if (cacheSize === loaded.runtime.cacheSize && cacheTtlMs === loaded.runtime.cacheTtlMs) return loaded;
  return { runtime: { ...loaded.runtime, cacheSize, cacheTtlMs }, raw: loaded.raw };
}
