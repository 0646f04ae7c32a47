export interface BackoffOptions {
  /** Delay after the first failure. Default 50 ms. */
  baseMs?: number;
  /** Upper bound for every delay, jitter included. Default 5 minutes. */
  maxMs?: number;
  /** Growth per consecutive failure. Default 2. */
  factor?: number;
  /** Extra random fraction added on top: delay * (1 + jitter * random()). Default 0.1. */
  jitter?: number;
  /** Source of randomness in [0, 1); injectable so tests are deterministic. */
  random?: () => number;
}

interface ResolvedBackoff {
  baseMs: number;
  maxMs: number;
  factor: number;
  jitter: number;
  random: () => number;
}

function resolve(options: BackoffOptions): ResolvedBackoff {
  const { baseMs = 50, maxMs = 5 * 60_000, factor = 2, jitter = 0.1, random = Math.random } = options;
  if (!(baseMs >= 0)) throw new RangeError(`backoff: baseMs must be >= 0, got ${baseMs}`);
  if (!(maxMs >= baseMs)) throw new RangeError(`backoff: maxMs (${maxMs}) must be >= baseMs (${baseMs})`);
  if (!(factor >= 1)) throw new RangeError(`backoff: factor must be >= 1, got ${factor}`);
  if (!(jitter >= 0)) throw new RangeError(`backoff: jitter must be >= 0, got ${jitter}`);
  return { baseMs, maxMs, factor, jitter, random };
}

/** Delay for the n-th consecutive failure (n >= 1). */
function delayFor(failures: number, o: ResolvedBackoff): number {
  // factor ** n overflows to Infinity for large n; Math.min absorbs that, but 0 * Infinity is
  // NaN, hence the explicit zero-base case.
  const exp = o.baseMs === 0 ? 0 : Math.min(o.baseMs * o.factor ** (failures - 1), o.maxMs);
  // Jitter spreads retries of many keys that failed together (e.g. API server outage) so they
  // do not hit the server in lockstep; it is capped so maxMs stays a hard bound.
  const r = Math.min(Math.max(o.random(), 0), 1);
  // exp + exp*jitter*r rather than exp*(1+jitter*r): fewer rounding surprises (110, not 110.00000000000001).
  return Math.min(exp + exp * o.jitter * r, o.maxMs);
}

/**
 * Per-key exponential backoff for rate-limited requeues. Memory per key is held until
 * forget(key); the controller calls forget on success (and when the object is gone).
 */
export class ExponentialBackoff {
  private readonly opts: ResolvedBackoff;
  private readonly counts = new Map<string, number>();

  constructor(options: BackoffOptions = {}) {
    this.opts = resolve(options);
  }

  /** Records one more failure for `key` and returns how long to wait before retrying it. */
  next(key: string): number {
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return delayFor(n, this.opts);
  }

  /** Resets `key`'s failure count; the next failure starts again at baseMs. */
  forget(key: string): void {
    this.counts.delete(key);
  }

  /** Consecutive failures recorded for `key` since the last forget. */
  failures(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

/**
 * Single-stream capped exponential backoff with jitter, for reconnect loops such as informer
 * watch restarts: call next() before each retry, reset() once the connection is healthy.
 */
export class RetryDelay {
  private readonly opts: ResolvedBackoff;
  private count = 0;

  constructor(options: BackoffOptions = {}) {
    this.opts = resolve(options);
  }

  next(): number {
    this.count++;
    return delayFor(this.count, this.opts);
  }

  reset(): void {
    this.count = 0;
  }

  /** Retries since the last reset. */
  get attempts(): number {
    return this.count;
  }
}
