// Reading a gitToken: one GET of one Secret in the request's own namespace
// (no list, no watch, nothing cached here), so the resolver's RBAC can stay
// at `get` on secrets, and a token is only ever in memory for one resolution.
// The Secret's annotations come with it: they bind the token to URLs
// (credential-binding.ts).
import { isApiError, type KubeClient, type KubeObject, secrets } from "@quarry/kube";

/** A usable token and its Secret's annotations. */
export interface TokenSecret {
  value: string;
  annotations: Readonly<Record<string, string>>;
}

/**
 * Why the Secret cannot serve as a token (missing, unreadable, no such key, empty). The resolver
 * logs it and tells the requester one message for all of them, so a request cannot learn whether
 * a Secret or a key exists.
 */
export interface TokenSecretProblem {
  problem: string;
}

/** The token, or why not; an API failure other than 403/404 throws (transient, retried). */
export type SecretReader = (
  namespace: string,
  name: string,
  key: string,
  signal: AbortSignal,
) => Promise<TokenSecret | TokenSecretProblem>;

interface SecretObject extends KubeObject {
  data?: Record<string, string>;
}

export function kubeSecretReader(client: KubeClient): SecretReader {
  return async (namespace, name, key, signal) => {
    const which = `Secret ${namespace}/${name}`;
    let secret: SecretObject;
    try {
      secret = await client.get<SecretObject>(secrets, namespace, name, signal);
    } catch (err) {
      if (isApiError(err) && err.status === 404) return { problem: `${which} not found` };
      if (isApiError(err) && err.status === 403) {
        return {
          problem: `the git resolver may not read ${which} (RBAC: bind quarry-git-resolver-tokens in ${namespace})`,
        };
      }
      throw err;
    }
    const encoded = secret.data?.[key];
    if (encoded === undefined) return { problem: `${which} has no key ${JSON.stringify(key)}` };
    const value = Buffer.from(encoded, "base64").toString("utf8").trim();
    if (value === "") return { problem: `key ${JSON.stringify(key)} of ${which} is empty` };
    return { value, annotations: secret.metadata.annotations ?? {} };
  };
}

/** What a request learns when its gitToken cannot be used, whatever the reason (names only). */
export function unusableTokenMessage(namespace: string, name: string, key: string, url: string): string {
  return `param "gitToken": Secret ${namespace}/${name} key ${JSON.stringify(key)} cannot be used as a git token for ${url}: it is missing, empty or unreadable by the git resolver, or not bound to this URL (the resolver's log says which)`;
}
