// Source failures → what the request shows. Terminal ones become a
// ResolutionError with Quarry's reason and the param at fault; an unreachable
// or slow server stays a plain Error, which the runtime retries.
import { ResolutionError } from "@quarry/resolver-sdk";
import { GitSourceError } from "./engine/source.ts";

export interface FailureContext {
  url: string;
  /** The commit being read, once known. */
  commit: string | undefined;
  /** Whether a gitToken was sent. */
  withToken: boolean;
}

export function toResolutionError(err: unknown, ctx: FailureContext): Error {
  if (!(err instanceof GitSourceError)) return err instanceof Error ? err : new Error(String(err));
  const at = ctx.commit ? ` (commit ${ctx.commit} of ${ctx.url})` : "";
  switch (err.code) {
    case "repo-not-found":
      return new ResolutionError("NotFound", `param "url": ${err.message}`, { cause: err });
    case "revision-not-found":
      return new ResolutionError("NotFound", `param "revision": ${err.message}`, { cause: err });
    case "path-not-found":
    case "not-a-file":
    case "symlink-loop":
      return new ResolutionError("NotFound", `param "pathInRepo": ${err.message}${at}`, { cause: err });
    case "path-escapes":
      return new ResolutionError("Forbidden", `param "pathInRepo": ${err.message}${at}`, { cause: err });
    case "file-too-large":
      return new ResolutionError("TooLarge", `param "pathInRepo": ${err.message}${at}`, { cause: err });
    case "repo-too-large":
      return new ResolutionError("TooLarge", `param "url": ${err.message}`, { cause: err });
    case "auth":
      return new ResolutionError(
        "Forbidden",
        ctx.withToken
          ? `param "gitToken": ${err.message}: the token was rejected`
          : `param "url": ${err.message}: the repository needs credentials; name a Secret in "gitToken"`,
        { cause: err },
      );
    case "blocked-address":
    case "redirect":
      // the egress policy: where the resolver never connects, and no redirect followed
      return new ResolutionError("Forbidden", `param "url": ${err.message}`, { cause: err });
    case "tls":
    case "proxy-refused":
      // retrying cannot fix trust or an egress policy: fail at once, naming the host
      return new ResolutionError("SourceUnavailable", `param "url": ${err.message}`, { cause: err });
    default:
      // unavailable, aborted: transient, retried by the runtime
      return err;
  }
}
