// Typed errors of the requester, so callers can tell "retry later" from "this
// can never work" without parsing messages.

/**
 * A request already exists under the deterministic name but asks for something else (another
 * resolver type, other params or url). Either the 128-bit name hash collided or someone edited
 * the request; adopting it would hand the caller somebody else's resource, so it is refused.
 * Retrying cannot help: treat it as permanent.
 */
export class RequestMismatchError extends Error {
  readonly namespace: string;
  readonly requestName: string;
  /** What differs, naming labels and params but never param values (they may point at credentials). */
  readonly differences: readonly string[];
  constructor(namespace: string, requestName: string, differences: readonly string[]) {
    super(
      `ResolutionRequest ${namespace}/${requestName} exists but asks for something else ` +
        `(${differences.join("; ")}): a name-hash collision or an edited request; refusing to adopt it`,
    );
    this.name = "RequestMismatchError";
    this.namespace = namespace;
    this.requestName = requestName;
    this.differences = differences;
  }
}

/**
 * The request existed, but is being deleted (its previous owners went away), or it kept
 * vanishing between create and adopt. Transient: the next attempt creates a fresh one.
 */
export class RequestTerminatingError extends Error {
  readonly namespace: string;
  readonly requestName: string;
  constructor(namespace: string, requestName: string, detail: string) {
    super(`ResolutionRequest ${namespace}/${requestName} ${detail}; retry once it is gone`);
    this.name = "RequestTerminatingError";
    this.namespace = namespace;
    this.requestName = requestName;
  }
}

/** waitFor: the request does not exist, or was deleted before it finished. */
export class RequestNotFoundError extends Error {
  readonly namespace: string;
  readonly requestName: string;
  /** True when it was seen and then deleted while waiting. */
  readonly deleted: boolean;
  constructor(namespace: string, requestName: string, deleted: boolean) {
    super(
      deleted
        ? `ResolutionRequest ${namespace}/${requestName} was deleted before it finished`
        : `ResolutionRequest ${namespace}/${requestName} not found`,
    );
    this.name = "RequestNotFoundError";
    this.namespace = namespace;
    this.requestName = requestName;
    this.deleted = deleted;
  }
}

/**
 * waitFor: the caller's AbortSignal fired. Named "AbortError" like the platform's own abort
 * errors, so generic `err.name === "AbortError"` checks keep working; `cause` is the signal's reason.
 */
export class WaitAbortedError extends Error {
  constructor(namespace: string, requestName: string, reason: unknown) {
    super(`waiting for ResolutionRequest ${namespace}/${requestName} was aborted`, { cause: reason });
    this.name = "AbortError";
  }
}

/** waitFor: timeoutMs elapsed before the request finished. Named "TimeoutError" like AbortSignal.timeout's. */
export class WaitTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(namespace: string, requestName: string, timeoutMs: number, lastSeen: string) {
    super(
      `ResolutionRequest ${namespace}/${requestName} did not finish within ${timeoutMs} ms (last seen: ${lastSeen})`,
    );
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}
