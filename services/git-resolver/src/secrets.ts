// Reading a gitToken: one GET of one Secret in the request's own namespace
// (no list, no watch, nothing cached here), so the resolver's RBAC can stay
// at `get` on secrets, and a token is only ever in memory for one resolution.
import { isApiError, type KubeClient, type KubeObject, secrets } from "@quarry/kube";
import { forbidden, notFound } from "@quarry/resolver-sdk";

/** Returns the value, or throws ResolutionError (NotFound / Forbidden) naming the param. */
export type SecretReader = (
  namespace: string,
  name: string,
  key: string,
  signal: AbortSignal,
) => Promise<string>;

interface SecretObject extends KubeObject {
  data?: Record<string, string>;
}

export function kubeSecretReader(client: KubeClient): SecretReader {
  return async (namespace, name, key, signal) => {
    let secret: SecretObject;
    try {
      secret = await client.get<SecretObject>(secrets, namespace, name, signal);
    } catch (err) {
      if (isApiError(err) && err.status === 404) {
        throw notFound(`param "gitToken": Secret ${namespace}/${name} not found`);
      }
      if (isApiError(err) && err.status === 403) {
        throw forbidden(`param "gitToken": the git resolver may not read Secret ${namespace}/${name} (RBAC)`);
      }
      throw err;
    }
    const encoded = secret.data?.[key];
    if (encoded === undefined) {
      throw notFound(`param "gitTokenKey": Secret ${namespace}/${name} has no key ${JSON.stringify(key)}`);
    }
    const value = Buffer.from(encoded, "base64").toString("utf8").trim();
    if (value === "")
      throw notFound(
        `param "gitTokenKey": key ${JSON.stringify(key)} of Secret ${namespace}/${name} is empty`,
      );
    return value;
  };
}
