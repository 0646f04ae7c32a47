// Reading a credential a request names (a git token, an http password): one
// GET of one Secret in the request's own namespace (no list, no watch, nothing
// kept), so RBAC stays at `get` on secrets where a namespace opted in, and the
// value is in memory for one resolution only. The Secret's annotations come
// with it: they bind the credential to URLs (checkCredentialBinding).
import { isApiError, type KubeClient, type KubeObject, secrets } from "@quarry/kube";

/** A usable credential and its Secret's annotations. */
export interface CredentialSecret {
  value: string;
  annotations: Readonly<Record<string, string>>;
}

/**
 * Why the Secret cannot serve (missing, unreadable, no such key, empty): logged, never told to
 * the requester, who reads one message for all of them, so a request cannot learn whether a
 * Secret or a key exists.
 */
export interface CredentialProblem {
  problem: string;
}

/** The credential, or why not; an API failure other than 403/404 throws (transient, retried). */
export type CredentialReader = (
  namespace: string,
  name: string,
  key: string,
  signal: AbortSignal,
) => Promise<CredentialSecret | CredentialProblem>;

export interface CredentialReaderOptions {
  /** who reads, in the RBAC problem: "the git resolver" */
  reader: string;
  /** the ClusterRole a namespace binds to opt in */
  optInRole: string;
  /** trim surrounding whitespace (a token) or keep the bytes as stored (a password, as Tekton) */
  trim: boolean;
}

interface SecretObject extends KubeObject {
  data?: Record<string, string>;
}

export function kubeCredentialReader(client: KubeClient, opts: CredentialReaderOptions): CredentialReader {
  return async (namespace, name, key, signal) => {
    const which = `Secret ${namespace}/${name}`;
    let secret: SecretObject;
    try {
      secret = await client.get<SecretObject>(secrets, namespace, name, signal);
    } catch (err) {
      if (isApiError(err, 404)) return { problem: `${which} not found` };
      if (isApiError(err, 403)) {
        return {
          problem: `${opts.reader} may not read ${which} (RBAC: bind ${opts.optInRole} in ${namespace})`,
        };
      }
      throw err;
    }
    const encoded = secret.data?.[key];
    if (encoded === undefined) return { problem: `${which} has no key ${JSON.stringify(key)}` };
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const value = opts.trim ? decoded.trim() : decoded;
    if (value === "") return { problem: `key ${JSON.stringify(key)} of ${which} is empty` };
    return { value, annotations: secret.metadata.annotations ?? {} };
  };
}
