// lifecycle-controller-config: the keys an operator may set, parsed strictly
// so a typo is reported (and the last good config kept) instead of guessed at.
import { ConfigError, parseDuration } from "@quarry/kube";

export const CONFIG_MAP_NAME = "lifecycle-controller-config";
export const KEY_MAX_RESOLUTION_TIMEOUT = "default-maximum-resolution-timeout";
export const KEY_COMPLETED_REQUEST_TTL = "completed-request-ttl";

export interface LifecycleConfig {
  /** Global deadline for a request, counted from its creation. */
  maxResolutionTimeoutMs: number;
  /** A completed request is deleted this long after it completed, once no owner wants it (cleanup.ts); 0 = never. */
  completedRequestTtlMs: number;
}

export const defaultLifecycleConfig: LifecycleConfig = {
  maxResolutionTimeoutMs: 60_000,
  completedRequestTtlMs: 60 * 60_000,
};

export function parseLifecycleConfig(
  data: Record<string, string>,
  defaults: LifecycleConfig,
): LifecycleConfig {
  const config = { ...defaults };
  const raw = data[KEY_MAX_RESOLUTION_TIMEOUT];
  if (raw !== undefined && raw.trim() !== "") {
    let ms: number;
    try {
      ms = parseDuration(raw);
    } catch (err) {
      throw new ConfigError(KEY_MAX_RESOLUTION_TIMEOUT, (err as Error).message);
    }
    if (ms <= 0) throw new ConfigError(KEY_MAX_RESOLUTION_TIMEOUT, `must be positive, got "${raw}"`);
    config.maxResolutionTimeoutMs = ms;
  }
  const ttl = data[KEY_COMPLETED_REQUEST_TTL];
  if (ttl !== undefined && ttl.trim() !== "") {
    let ms: number;
    try {
      // a bare 0 is a Go duration too
      ms = ttl.trim() === "0" ? 0 : parseDuration(ttl);
    } catch (err) {
      throw new ConfigError(KEY_COMPLETED_REQUEST_TTL, (err as Error).message);
    }
    if (ms < 0)
      throw new ConfigError(KEY_COMPLETED_REQUEST_TTL, `must be 0 (never) or positive, got "${ttl}"`);
    config.completedRequestTtlMs = ms;
  }
  return config;
}
