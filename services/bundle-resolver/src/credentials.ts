// Pull credentials for one request, from its own namespace only: the Secret
// named by `secret`, then the imagePullSecrets of `serviceAccount` (or the
// configured default ServiceAccount). One GET per object, nothing listed,
// watched or kept beyond the resolution, so RBAC stays at `get` and a
// credential lives in memory only while it is used.
import {
  isApiError,
  type KubeClient,
  type KubeObject,
  type ResourceType,
  secrets,
  serviceAccounts,
} from "@quarry/kube";
import { DockerConfigError, DockerCredentials } from "@quarry/oci";
import { forbidden, invalidParams, notFound } from "@quarry/resolver-sdk";

interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}
interface ServiceAccountObject extends KubeObject {
  imagePullSecrets?: { name?: string }[];
}

const CONFIG_KEYS: Record<string, string> = {
  "kubernetes.io/dockerconfigjson": ".dockerconfigjson",
  "kubernetes.io/dockercfg": ".dockercfg",
};

export interface CredentialRequest {
  namespace: string;
  secret: string | undefined;
  serviceAccount: string | undefined;
  /** Used when neither secret nor serviceAccount is named; undefined = none. */
  defaultServiceAccount: string | undefined;
  signal: AbortSignal;
}

/** Where each credential came from, for messages (names only). */
export interface LoadedCredentials {
  credentials: DockerCredentials;
  sources: string[];
}

export type CredentialLoader = (req: CredentialRequest) => Promise<LoadedCredentials>;

export function kubeCredentialLoader(client: KubeClient): CredentialLoader {
  return async (req) => {
    const credentials = new DockerCredentials();
    const sources: string[] = [];
    const { namespace, signal } = req;
    if (req.secret) {
      const secret = await getOrThrow<SecretObject>(client, secrets, namespace, req.secret, "secret", signal);
      addSecret(credentials, sources, secret, namespace, "secret");
    }
    const saName = req.serviceAccount ?? (req.secret ? undefined : req.defaultServiceAccount);
    if (saName) {
      const explicit = req.serviceAccount !== undefined;
      const sa = explicit
        ? await getOrThrow<ServiceAccountObject>(
            client,
            serviceAccounts,
            namespace,
            saName,
            "serviceAccount",
            signal,
          )
        : await getOrUndefined<ServiceAccountObject>(client, serviceAccounts, namespace, saName, signal);
      for (const ref of sa?.imagePullSecrets ?? []) {
        if (!ref.name) continue;
        // like the kubelet: a listed pull Secret that is missing or unreadable is skipped
        const secret = await getOrUndefined<SecretObject>(client, secrets, namespace, ref.name, signal);
        if (secret)
          addSecret(credentials, sources, secret, namespace, explicit ? "serviceAccount" : undefined);
      }
    }
    return { credentials, sources };
  };
}

function addSecret(
  credentials: DockerCredentials,
  sources: string[],
  secret: SecretObject,
  namespace: string,
  param: "secret" | "serviceAccount" | undefined,
): void {
  const name = `Secret ${namespace}/${secret.metadata.name}`;
  const key = CONFIG_KEYS[secret.type ?? ""];
  const encoded = key ? secret.data?.[key] : undefined;
  if (!key || encoded === undefined) {
    if (!param) return;
    throw invalidParams(
      `param "${param}": ${name} is of type ${JSON.stringify(secret.type ?? "")}; an image pull Secret must be kubernetes.io/dockerconfigjson (or dockercfg) with its key`,
    );
  }
  try {
    credentials.add(Buffer.from(encoded, "base64").toString("utf8"), name);
    sources.push(name);
  } catch (err) {
    if (err instanceof DockerConfigError && param) throw invalidParams(`param "${param}": ${err.message}`);
    if (!(err instanceof DockerConfigError)) throw err;
  }
}

async function getOrThrow<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
  param: string,
  signal: AbortSignal,
): Promise<T> {
  try {
    return await client.get<T>(type, namespace, name, signal);
  } catch (err) {
    if (isApiError(err, 404)) throw notFound(`param "${param}": ${type.kind} ${namespace}/${name} not found`);
    if (isApiError(err, 403)) {
      throw forbidden(
        `param "${param}": the bundle resolver may not read ${type.kind} ${namespace}/${name} (RBAC: bind quarry-bundle-resolver-credentials in this namespace)`,
      );
    }
    throw err;
  }
}

async function getOrUndefined<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.get<T>(type, namespace, name, signal);
  } catch (err) {
    if (isApiError(err, 404) || isApiError(err, 403)) return undefined;
    throw err;
  }
}
