// Value parsers shared by the services' ConfigMap parsers; each throws
// ConfigError naming the key, so the runtime keeps the last good config.
import { ConfigError } from "./config.ts";
import { parseDuration } from "./duration.ts";

/** A positive Go duration ("30s", "1m30s") in ms. */
export function configDuration(key: string, value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (err) {
    throw new ConfigError(key, (err as Error).message);
  }
  if (ms <= 0) throw new ConfigError(key, `must be positive, got "${value}"`);
  return ms;
}

/** One full-match regular expression per line; blank lines and `#` comments are skipped. */
export function configPatterns(key: string, raw: string | undefined): RegExp[] {
  if (raw === undefined) return [];
  return raw
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => configPattern(key, l));
}

/** A regular expression that must match the whole value. */
export function configPattern(key: string, pattern: string): RegExp {
  try {
    return new RegExp(`^(?:${pattern})$`);
  } catch (err) {
    throw new ConfigError(
      key,
      `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`,
    );
  }
}
