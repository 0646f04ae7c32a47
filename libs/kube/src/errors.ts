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
  constructor(message: string, options?: ErrorOptions & { retryAfterMs?: number | undefined }) {
    super(message, options);
    this.name = "TransientError";
    this.retryAfterMs = options?.retryAfterMs;
  }
}
