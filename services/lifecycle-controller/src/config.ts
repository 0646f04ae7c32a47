// lifecycle-controller-config: the keys an operator may set, parsed strictly
// so a typo is reported (and the last good config kept) instead of guessed at.
import { ConfigError, parseDuration } from "@quarry/kube";

export const CONFIG_MAP_NAME = "lifecycle-controller-config";
export const KEY_MAX_RESOLUTION_TIMEOUT = "default-maximum-resolution-timeout";

export interface LifecycleConfig {
  /** Global deadline for a request, counted from its creation. */
  maxResolutionTimeoutMs: number;
}

export const defaultLifecycleConfig: LifecycleConfig = { maxResolutionTimeoutMs: 60_000 };

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
  return config;
}
