// Errors of the API client and the reconcile error taxonomy.

/** A non-2xx answer of the kube-apiserver, carrying its Status reason. */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  constructor(status: number, reason: string | undefined, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.reason = reason;
  }
  get isNotFound(): boolean {
    return this.status === 404;
  }
  get isConflict(): boolean {
    return this.status === 409;
  }
  get isGone(): boolean {
    return this.status === 410;
  }
  get isForbidden(): boolean {
    return this.status === 403;
  }
}

export function isApiError(err: unknown, status?: number): err is ApiError {
  return err instanceof ApiError && (status === undefined || err.status === status);
}

/**
 * A watch's resourceVersion is too old to resume from (HTTP 410, or an ERROR event with code 410):
 * the watcher lists again and watches from the list's resourceVersion.
 */
export class WatchExpiredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WatchExpiredError";
  }
}

/** What an ERROR watch event's object (a Status) reports: WatchExpiredError for code 410, else an Error. */
export function watchEventError(status: unknown): Error {
  const s = status as { code?: number; message?: string };
  if (s.code === 410) return new WatchExpiredError(s.message ?? "resourceVersion too old");
  return new Error(`watch error: ${s.message ?? JSON.stringify(s)}`);
}

/** Reconcile failed in a way retrying cannot fix: log it and drop the key. */
export class PermanentError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PermanentError";
  }
}

/**
 * Reconcile failed for a reason that may pass (network, 5xx, conflicts):
 * requeue with per-key backoff. Any error that is not a PermanentError is
 * treated the same way; this class only makes the intent explicit.
 */
export class TransientError extends Error {
  /** The source asked us to wait at least this long (an HTTP Retry-After); the backoff honours it. */
  readonly retryAfterMs: number | undefined;
  /**
   * The caller's own retry schedule (e.g. a resolver configured with Tekton's backoff keys): wait
   * this long instead of the queue's backoff. A longer retryAfterMs still wins.
   */
  readonly backoffMs: number | undefined;
  constructor(
    message: string,
    options?: ErrorOptions & { retryAfterMs?: number | undefined; backoffMs?: number | undefined },
  ) {
    super(message, options);
    this.name = "TransientError";
    this.retryAfterMs = options?.retryAfterMs;
    this.backoffMs = options?.backoffMs;
  }
}

// Errors get wrapped on their way up (`new Error("fetch x", { cause })`), so the taxonomy is
// read through the cause chain: the outermost PermanentError or TransientError decides.
// The walk is bounded and stops at a cycle, since `cause` is an arbitrary user-set property.
const MAX_CAUSE_DEPTH = 32;

/** `err`, then its `cause`, then that one's `cause`…, at most 32 deep, each error once. */
export function* causeChain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current !== undefined && current !== null; depth++) {
    if (seen.has(current)) return;
    seen.add(current);
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

function classified(err: unknown): PermanentError | TransientError | undefined {
  for (const e of causeChain(err)) {
    if (e instanceof PermanentError || e instanceof TransientError) return e;
  }
  return undefined;
}

/** True when the outermost classified error in the cause chain is a PermanentError. */
export function isPermanentError(err: unknown): boolean {
  return classified(err) instanceof PermanentError;
}

/** The outermost classified error in the cause chain, if it is a TransientError. */
export function asTransientError(err: unknown): TransientError | undefined {
  const e = classified(err);
  return e instanceof TransientError ? e : undefined;
}

/**
 * The Retry-After a TransientError in the cause chain carries (the outermost one that has it),
 * unless a PermanentError comes first. A wrapper without its own retryAfterMs defers to its cause.
 */
export function transientRetryAfter(err: unknown): number | undefined {
  for (const e of causeChain(err)) {
    if (e instanceof PermanentError) return undefined;
    if (e instanceof TransientError && e.retryAfterMs !== undefined) return e.retryAfterMs;
  }
  return undefined;
}

/** The outermost TransientError's own backoff (backoffMs) in `err`'s cause chain, unless a PermanentError comes first. */
export function transientBackoff(err: unknown): number | undefined {
  for (const e of causeChain(err)) {
    if (e instanceof PermanentError) return undefined;
    if (e instanceof TransientError && e.backoffMs !== undefined) return e.backoffMs;
  }
  return undefined;
}

/** An error's message, or the thrown value as a string (a throw need not be an Error). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
