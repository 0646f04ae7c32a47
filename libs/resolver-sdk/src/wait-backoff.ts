// Tekton's backoff keys (backoff-duration, -factor, -jitter, -steps, -cap), as
// its git and bundle resolvers read them into a Kubernetes wait.Backoff, and the
// schedule of attempts that backoff produces. A resolver that reads them returns
// the parsed backoff from retryBackoff(); the runtime then spaces a request's
// attempts by this schedule and stops after `steps` of them, instead of its
// own max-attempts and exponential delays.
import { ConfigError, parseDuration } from "@quarry/kube";

/** A Kubernetes wait.Backoff, in milliseconds. */
export interface WaitBackoff {
  /** Delay after the first failed attempt. */
  durationMs: number;
  /** Each delay is the previous one times this (0: every delay is durationMs). */
  factor: number;
  /** Each delay gets up to delay * jitter added at random (0 or less: none). */
  jitter: number;
  /** Attempts in all, the first included (at least 1). */
  steps: number;
  /** Once growth would pass it, every later delay is this (0: no cap). Jitter may add to it. */
  capMs: number;
}

export const BACKOFF_KEYS = {
  duration: "backoff-duration",
  factor: "backoff-factor",
  jitter: "backoff-jitter",
  steps: "backoff-steps",
  cap: "backoff-cap",
} as const;

/** Tekton v1.15's defaults for an unset key (the same for git and bundles). */
export const TEKTON_BACKOFF_DEFAULTS: Readonly<WaitBackoff> = Object.freeze({
  durationMs: 2000,
  factor: 2,
  jitter: 0.1,
  steps: 2,
  capMs: 10_000,
});

/**
 * The backoff the config's backoff-* keys describe, Tekton's defaults filling the unset ones;
 * undefined when none is set (the runtime's own retries apply). A bad value throws ConfigError
 * naming the key: Go duration strings ("500ms", "1m30s", "0"), floats ("2", "1.5", "1e-1") and
 * integers as Go's parsers take them, none negative, steps at least 1.
 */
export function parseWaitBackoff(data: Readonly<Record<string, string>>): WaitBackoff | undefined {
  const get = (key: string) => {
    const v = data[key]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  if (Object.values(BACKOFF_KEYS).every((k) => get(k) === undefined)) return undefined;
  const d = TEKTON_BACKOFF_DEFAULTS;
  const duration = (key: string, fallback: number) => {
    const v = get(key);
    return v === undefined ? fallback : goDuration(key, v);
  };
  const float = (key: string, fallback: number) => {
    const v = get(key);
    return v === undefined ? fallback : goFloat(key, v);
  };
  const steps = get(BACKOFF_KEYS.steps);
  return {
    durationMs: duration(BACKOFF_KEYS.duration, d.durationMs),
    factor: float(BACKOFF_KEYS.factor, d.factor),
    jitter: float(BACKOFF_KEYS.jitter, d.jitter),
    steps: steps === undefined ? d.steps : goSteps(BACKOFF_KEYS.steps, steps),
    capMs: duration(BACKOFF_KEYS.cap, d.capMs),
  };
}

/**
 * The delay after the `failed`-th failed attempt (1: after the first), before attempt failed + 1,
 * as wait.Backoff's delay function yields it: durationMs, then each previous delay times the
 * factor (truncated to whole nanoseconds, as Go converts), held at capMs from the first growth
 * past it; `random()` in [0, 1) adds delay * jitter * random() when jitter > 0.
 */
export function backoffDelayMs(b: WaitBackoff, failed: number, random: () => number = Math.random): number {
  if (!Number.isInteger(failed) || failed < 1) {
    throw new RangeError(`backoffDelayMs: failed must be a positive integer, got ${failed}`);
  }
  // whole nanoseconds, as Go holds a duration (parsed durations are ns / 1e6 ms, so round back)
  const capNs = Math.round(b.capMs * 1e6);
  let ns = Math.round(b.durationMs * 1e6);
  for (let i = 1; i < failed; i++) {
    if (b.factor === 0) break;
    const next = Math.trunc(ns * b.factor);
    if (capNs > 0 && next > capNs) {
      ns = capNs;
      break; // wait.Backoff zeroes its steps here: every later delay is the cap
    }
    ns = next;
  }
  if (b.jitter > 0) ns = Math.trunc(ns + Math.min(Math.max(random(), 0), 1) * b.jitter * ns);
  return ns / 1e6;
}

/** The delays between a request's attempts when every attempt fails: steps - 1 of them. */
export function backoffSchedule(b: WaitBackoff, random: () => number = Math.random): number[] {
  return Array.from({ length: Math.max(b.steps - 1, 0) }, (_, i) => backoffDelayMs(b, i + 1, random));
}

/** A duration as Go's time.ParseDuration reads it, in ms; negative ones are refused. */
function goDuration(key: string, value: string): number {
  const unsigned = value.startsWith("+") ? value.slice(1) : value;
  if (unsigned.startsWith("-")) throw new ConfigError(key, `must not be negative, got "${value}"`);
  try {
    return parseDuration(unsigned);
  } catch {
    throw new ConfigError(key, `must be a duration like "500ms", "2s" or "1m30s", got "${value}"`);
  }
}

const GO_DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function goFloat(key: string, value: string): number {
  const n = GO_DECIMAL_FLOAT.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) throw new ConfigError(key, `must be a number like "2" or "0.1", got "${value}"`);
  if (n < 0) throw new ConfigError(key, `must not be negative, got "${value}"`);
  return n;
}

function goSteps(key: string, value: string): number {
  const n = /^[+-]?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new ConfigError(key, `must be an integer, got "${value}"`);
  if (n < 1) throw new ConfigError(key, `must be at least 1 (the number of attempts), got "${value}"`);
  return n;
}
