// What the engine does with a request's credentials: the Authorization header
// sent to the git server, and the hash that keys work shared between requests
// (ref lookups, access proofs, blob batches), so the token itself is never a key.
import { createHash } from "node:crypto";
import type { GitAuth, SourceRequest } from "./source.ts";

/** The Authorization header value for basic auth. */
export function basicAuthHeader(auth: GitAuth): string {
  return `Basic ${Buffer.from(`${auth.username}:${auth.token}`).toString("base64")}`;
}

/** Who the credentials are, as a hash (or "anonymous"). */
export function credentialHash(req: Pick<SourceRequest, "auth">): string {
  if (!req.auth) return "anonymous";
  return createHash("sha256")
    .update(JSON.stringify([req.auth.username, req.auth.token]))
    .digest("hex");
}
