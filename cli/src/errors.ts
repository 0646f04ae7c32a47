// Errors as a person should read them: the apiserver's own words, like
// kubectl's "Error from server (NotFound): ...", without our request line.
import { isApiError } from "@quarry/kube";

/** The apiserver's message of an ApiError (the client prefixes "METHOD path: HTTP nnn: "). */
export function serverMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return isApiError(err) ? message.replace(/^[A-Z]+ \S+: HTTP \d+: /, "") : message;
}

export function describeError(err: unknown): string {
  if (isApiError(err)) return `Error from server (${err.reason ?? err.status}): ${serverMessage(err)}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** A 404 that is not a Status "NotFound" comes from a path nobody serves: the CRD is missing. */
export function isUnserved(err: unknown): boolean {
  return isApiError(err, 404) && err.reason !== "NotFound";
}

const QUARRY_API = {
  what: "resolutionrequests.resolution.tekton.dev",
  hint: "is Quarry's API installed?",
};

/**
 * An unserved resource said plainly, instead of the apiserver's "404 page not found".
 * `what` names the resource (plural.group), `hint` what to check; Quarry's requests by default.
 */
export function explainUnserved(err: unknown, served: { what: string; hint: string } = QUARRY_API): unknown {
  return isUnserved(err) ? new Error(`this cluster does not serve ${served.what}: ${served.hint}`) : err;
}
