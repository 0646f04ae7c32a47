// The keys a resolver's ConfigMap may hold, so that one nobody reads is
// reported instead of silently doing nothing: a typo, a key of another
// resolver, or a key Tekton's resolver of the same type reads and Quarry
// does not implement.
import type { ConfigWarning } from "@quarry/kube";

/** What a resolver declares about its ConfigMap's keys (Resolver.configKeys). */
export interface ConfigKeys {
  /** Keys the resolver reads, besides the runtime's (RUNTIME_CONFIG_KEYS). A RegExp matches a whole key. */
  readonly known: readonly (string | RegExp)[];
  /** Keys Tekton's resolver of the same type reads that this one does not implement. A RegExp matches a whole key. */
  readonly tektonOnly?: readonly (string | RegExp)[];
}

/** The runtime's own keys, read for every resolver (config.ts). */
export const RUNTIME_CONFIG_KEYS: readonly string[] = [
  "default-cache-mode",
  "resolution-timeout",
  "cache-ttl",
  "max-attempts",
  "cache-size",
  "allowed-kinds",
];

export const UNKNOWN_CONFIG_KEY = "UnknownConfigKey";
export const UNSUPPORTED_CONFIG_KEY = "UnsupportedConfigKey";

/**
 * A warning per key of `data` that neither the runtime nor the resolver reads, sorted by key.
 * Without a declaration nothing is reported: the resolver's keys are not known.
 */
export function configKeyWarnings(
  data: Readonly<Record<string, string>>,
  type: string,
  keys: ConfigKeys | undefined,
): ConfigWarning[] {
  if (!keys) return [];
  const matches = (list: readonly (string | RegExp)[], key: string) =>
    list.some((k) => (typeof k === "string" ? k === key : wholeMatch(k, key)));
  const known = (key: string) => RUNTIME_CONFIG_KEYS.includes(key) || matches(keys.known, key);
  const warnings: ConfigWarning[] = [];
  for (const key of Object.keys(data).sort()) {
    if (known(key)) continue;
    warnings.push(
      matches(keys.tektonOnly ?? [], key)
        ? {
            key,
            reason: UNSUPPORTED_CONFIG_KEY,
            message: `key "${key}" is read by Tekton's ${type} resolver but not implemented by Quarry's; it has no effect`,
          }
        : {
            key,
            reason: UNKNOWN_CONFIG_KEY,
            message: `key "${key}" is not read by the ${type} resolver (a typo, or another resolver's key?); it has no effect`,
          },
    );
  }
  return warnings;
}

/** Anchored as a whole, so an alternation's shorter branch cannot hide a longer one (`a|ab` matches "ab"). */
function wholeMatch(pattern: RegExp, key: string): boolean {
  return new RegExp(`^(?:${pattern.source})$`, pattern.flags.replace("g", "").replace("y", "")).test(key);
}
