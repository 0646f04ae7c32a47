// The runtime's own keys in a resolver's ConfigMap (the resolver's keys sit
// beside them and are checked by the resolver's validateConfig). A key read
// here belongs in RUNTIME_CONFIG_KEYS (config-keys.ts), or it is reported as unknown.
import { ConfigError, parseDuration } from "@quarry/kube";
import { DEFAULT_ALLOWED_KINDS } from "./checks.ts";
import type { CacheMode } from "./params.ts";
import type { Resolver, ResolverConfig } from "./resolver.ts";

export interface RuntimeConfig {
  defaultCacheMode: CacheMode;
  /** Per-attempt deadline unless the resolver says otherwise. */
  resolutionTimeoutMs: number;
  /** Attempts for transient errors before failing with SourceUnavailable. */
  maxAttempts: number;
  cacheSize: number;
  cacheTtlMs: number;
  allowedKinds: readonly string[];
  /** A resolution still running after this long stamps quarry.dev/accepted-by on the request. */
  acceptedStampAfterMs: number;
}

export interface LoadedConfig {
  runtime: RuntimeConfig;
  /** Every key, for the resolver. */
  raw: ResolverConfig;
}

export const defaultRuntimeConfig: RuntimeConfig = {
  defaultCacheMode: "auto",
  resolutionTimeoutMs: 30_000,
  maxAttempts: 5,
  cacheSize: 1000,
  cacheTtlMs: 5 * 60_000,
  allowedKinds: DEFAULT_ALLOWED_KINDS,
  // a burst's first attempts run for seconds: a stamp for each would be one more status write per
  // request, and the stamp only serves a global timeout's message (a retry stamps at once)
  acceptedStampAfterMs: 10_000,
};

export function parseResolverConfig(
  data: Record<string, string>,
  resolver: Pick<Resolver, "validateConfig">,
): LoadedConfig {
  const rt = { ...defaultRuntimeConfig };
  const get = (key: string) => {
    const v = data[key]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const duration = (key: string) => {
    const v = get(key);
    if (v === undefined) return undefined;
    try {
      const ms = parseDuration(v);
      if (ms <= 0) throw new Error(`must be positive, got "${v}"`);
      return ms;
    } catch (err) {
      throw new ConfigError(key, (err as Error).message);
    }
  };
  const positiveInt = (key: string) => {
    const v = get(key);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new ConfigError(key, `must be a positive integer, got "${v}"`);
    return n;
  };
  const mode = get("default-cache-mode");
  if (mode !== undefined) {
    if (mode !== "always" && mode !== "never" && mode !== "auto") {
      throw new ConfigError("default-cache-mode", `must be always, never or auto, got "${mode}"`);
    }
    rt.defaultCacheMode = mode;
  }
  rt.resolutionTimeoutMs = duration("resolution-timeout") ?? rt.resolutionTimeoutMs;
  rt.cacheTtlMs = duration("cache-ttl") ?? rt.cacheTtlMs;
  rt.maxAttempts = positiveInt("max-attempts") ?? rt.maxAttempts;
  rt.cacheSize = positiveInt("cache-size") ?? rt.cacheSize;
  const kinds = get("allowed-kinds");
  if (kinds !== undefined) {
    rt.allowedKinds = kinds
      .split(",")
      .map((k) => k.trim())
      .filter(Boolean);
  }
  const raw: ResolverConfig = Object.freeze({ ...data });
  resolver.validateConfig?.(raw);
  return { runtime: rt, raw };
}

/**
 * The runtime's per-attempt deadline under `config` (its `resolution-timeout`,
 * else the default), for a resolver's timeout() when its own key is unset.
 */
export function runtimeTimeoutMs(config: Readonly<Record<string, string>>): number {
  const raw = config["resolution-timeout"];
  try {
    if (raw) return parseDuration(raw);
  } catch {
    // the runtime reports its own key
  }
  return defaultRuntimeConfig.resolutionTimeoutMs;
}

/**
 * A resolver's own config parser, run once per loaded config: the runtime
 * freezes each load and hands the same object to validateConfig and to every
 * resolution, so a WeakMap keyed by it parses each load once. Should a config
 * not parse here anyway, the error is thrown (and the attempt retried) rather
 * than resolving without the resolver's policy.
 */
export function configParser<T>(parse: (raw: ResolverConfig) => T): (raw: ResolverConfig) => T {
  const parsed = new WeakMap<ResolverConfig, T>();
  return (raw) => {
    let value = parsed.get(raw);
    if (value === undefined) {
      value = parse(raw);
      parsed.set(raw, value);
    }
    return value;
  };
}
