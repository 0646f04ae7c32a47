// Failures of a connection to the git server, as the engine reports them:
// the egress policy's refusals (a blocked address, a redirect), TLS and proxy
// failures, HTTP statuses and aborts, from isomorphic-git, Node or the SDK's
// egress checks, mapped to GitSourceError codes. Shared by ref discovery
// (refs/) and the address check before each git fetch (git/git-pin.ts).
import { describeEgressFailure, findEgressError } from "@quarry/resolver-sdk";
import { GitSourceError } from "./source.ts";

export function toSourceError(
  url: string,
  err: unknown,
  signal?: AbortSignal,
  proxy?: string,
): GitSourceError {
  if (err instanceof GitSourceError) return err;
  const refused = findEgressError(err);
  if (refused?.code === "blocked-address")
    return new GitSourceError("blocked-address", refused.message, { cause: err });
  if (refused?.code === "cross-origin-redirect" || refused?.code === "redirect")
    return new GitSourceError("redirect", refused.message, { cause: err });
  const egress = egressFailure(url, err, proxy);
  if (egress) {
    const hint =
      egress.code === "tls"
        ? egress.message.replace("the resolver's ca-bundle", "the git resolver's ca-bundle")
        : egress.message;
    return new GitSourceError(egress.code, hint, { cause: err });
  }
  const e = err as { code?: string; name?: string; message?: string; data?: { statusCode?: number } };
  if (signal?.aborted || e.name === "AbortError") {
    return new GitSourceError("aborted", `git request aborted: ${String(signal?.reason ?? e.message)}`, {
      cause: err,
    });
  }
  if (e.code === "HttpError") {
    const status = e.data?.statusCode ?? 0;
    if (status === 401 || status === 403) {
      return new GitSourceError("auth", `${url} refused the credentials (HTTP ${status})`, {
        cause: err,
      });
    }
    if (status === 404 || status === 410) {
      return new GitSourceError("repo-not-found", `repository ${url} not found (HTTP ${status})`, {
        cause: err,
      });
    }
    return new GitSourceError("unavailable", `${url} answered HTTP ${status}`, { cause: err });
  }
  if (e.code === "SmartHttpError") {
    return new GitSourceError("repo-not-found", `${url} is not a git repository (no smart-HTTP answer)`, {
      cause: err,
    });
  }
  return new GitSourceError(
    "unavailable",
    `${url}: ${e.code ? `${e.code}: ` : ""}${e.message ?? String(err)}`,
    {
      cause: err,
    },
  );
}

function egressFailure(url: string, err: unknown, proxy: string | undefined) {
  try {
    return describeEgressFailure(err, new URL(url), proxy);
  } catch {
    return undefined;
  }
}
