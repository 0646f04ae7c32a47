// What can go wrong talking to a registry, classified so a caller can decide
// terminal vs retry without reading messages. Messages never carry
// credentials or tokens.

export type RegistryErrorCode =
  /** 401 after presenting what we had (or nothing): credentials missing or wrong. */
  | "unauthorized"
  /** 403: authenticated but not allowed. */
  | "denied"
  /** 404 / MANIFEST_UNKNOWN / NAME_UNKNOWN / BLOB_UNKNOWN. */
  | "not-found"
  /** Bytes whose sha256 or length differ from the digest/size they were asked by. */
  | "digest-mismatch"
  /** A manifest or blob larger than the caller's cap. */
  | "too-large"
  /** A manifest we cannot parse or of a media type we do not read. */
  | "invalid-manifest"
  /** Plain HTTP refused for a host that is neither loopback nor marked insecure. */
  | "insecure"
  /**
   * The connection failed for a reason retrying cannot fix: an untrusted certificate, a proxy
   * that refuses, credentials that would cross a proxy in clear.
   */
  | "egress"
  /** A redirect to another origin for a call that may not leave it (all but blob GETs). */
  | "redirect"
  /** 429, 5xx, connection errors, timeouts: worth retrying. */
  | "unavailable";

export class RegistryError extends Error {
  readonly code: RegistryErrorCode;
  /** HTTP status, when the registry answered. */
  readonly status: number | undefined;
  /** The registry's Retry-After, in ms, when it sent one (429/503). */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: RegistryErrorCode,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "RegistryError";
    this.code = code;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }

  get retryable(): boolean {
    return this.code === "unavailable";
  }
}

/** Retry-After as seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
