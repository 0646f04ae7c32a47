// Why a call failed before (or instead of) the source answering, when the
// reason is trust, the proxy or the egress policy rather than a flaky network:
// none of these is fixed by retrying.
import type { QuarryReason } from "@quarry/api";

export type EgressErrorCode =
  /** The source's certificate is not trusted (or does not name the host). */
  | "tls"
  /** The proxy refused the CONNECT. */
  | "proxy-refused"
  /** Credentials would have crossed a proxy over plain http. */
  | "credentials-in-clear"
  /** The address a connection would go to is in blocked-networks. */
  | "blocked-address"
  /** The source redirected to another origin, which is not followed. */
  | "cross-origin-redirect"
  /** More redirects than the cap, or one that cannot be followed (bad Location, a downgrade to http). */
  | "redirect";

export class EgressError extends Error {
  readonly code: EgressErrorCode;
  constructor(code: EgressErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EgressError";
    this.code = code;
  }
}

/** The EgressError in an error's cause chain (fetch and node wrap the connector's error), if any. */
export function findEgressError(err: unknown): EgressError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof EgressError) return e;
  }
  return undefined;
}

/**
 * The terminal reason for an egress failure: a policy refusal (a blocked
 * address, a cross-origin redirect, credentials in clear) is Forbidden; trust,
 * a refusing proxy or a broken redirect chain is SourceUnavailable.
 */
export function egressReason(err: EgressError): QuarryReason {
  switch (err.code) {
    case "blocked-address":
    case "cross-origin-redirect":
    case "credentials-in-clear":
      return "Forbidden";
    default:
      return "SourceUnavailable";
  }
}
