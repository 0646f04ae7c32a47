// Pull credentials for one request, from its own namespace only: the Secret
// named by `secret`, then the imagePullSecrets of `serviceAccount` (or the
// configured default ServiceAccount). One GET per object, nothing listed,
// watched or kept beyond the resolution, so RBAC stays at `get` and a
// credential lives in memory only while it is used. A named Secret or
// ServiceAccount that cannot serve (missing, unreadable, wrong type, bad
// content) gives the requester one message per param, so a request cannot
// probe which Secrets exist; the resolver's log says which it was.
import {
  isApiError,
  type KubeClient,
  type KubeObject,
  type ResourceType,
  secrets,
  serviceAccounts,
} from "@quarry/kube";
import { DockerConfigError, DockerCredentials } from "@quarry/oci";
import { forbidden } from "@quarry/resolver-sdk";

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
  /** Where the detail of a refused credential goes (the request's log). */
  log: { warn(fields: Record<string, unknown>, msg: string): void };
}

/** Where each credential came from, for messages (names only). */
export interface LoadedCredentials {
  credentials: DockerCredentials;
  sources: string[];
}

export type CredentialLoader = (req: CredentialRequest) => Promise<LoadedCredentials>;

type NamedParam = "secret" | "serviceAccount";

/** What a request learns when the Secret or ServiceAccount it names cannot be used, whatever the reason. */
export function unusableCredentialMessage(param: NamedParam, namespace: string, name: string): string {
  return param === "secret"
    ? `param "secret": Secret ${namespace}/${name} cannot be used as an image pull Secret: it is missing, unreadable by the bundle resolver, or not a valid kubernetes.io/dockerconfigjson (or dockercfg) Secret (the resolver's log says which)`
    : `param "serviceAccount": ServiceAccount ${namespace}/${name} cannot be used for pull credentials: it is missing or unreadable by the bundle resolver, or one of its imagePullSecrets is not a valid image pull Secret (the resolver's log says which)`;
}

export function kubeCredentialLoader(client: KubeClient): CredentialLoader {
  return async (req) => {
    const credentials = new DockerCredentials();
    const sources: string[] = [];
    const { namespace, signal } = req;
    const refuse = (param: NamedParam, name: string, problem: string) => {
      req.log.warn({ param, object: `${namespace}/${name}`, problem }, "pull credential refused");
      return forbidden(unusableCredentialMessage(param, namespace, name));
    };
    if (req.secret) {
      const secret = await getOrProblem<SecretObject>(client, secrets, namespace, req.secret, signal);
      if ("problem" in secret) throw refuse("secret", req.secret, secret.problem);
      const problem = addSecret(credentials, sources, secret.object, namespace);
      if (problem) throw refuse("secret", req.secret, problem);
    }
    const saName = req.serviceAccount ?? (req.secret ? undefined : req.defaultServiceAccount);
    if (saName) {
      const explicit = req.serviceAccount !== undefined;
      const sa = await getOrProblem<ServiceAccountObject>(client, serviceAccounts, namespace, saName, signal);
      if ("problem" in sa && explicit) throw refuse("serviceAccount", saName, sa.problem);
      for (const ref of "object" in sa ? (sa.object.imagePullSecrets ?? []) : []) {
        if (!ref.name) continue;
        // like the kubelet: a listed pull Secret that is missing or unreadable is skipped
        const secret = await getOrUndefined<SecretObject>(client, secrets, namespace, ref.name, signal);
        if (!secret) continue;
        const problem = addSecret(credentials, sources, secret, namespace);
        if (problem && explicit)
          throw refuse("serviceAccount", saName, `imagePullSecret ${ref.name}: ${problem}`);
      }
    }
    return { credentials, sources };
  };
}

/** Adds the Secret's docker config; returns why it cannot serve, if it cannot. */
function addSecret(
  credentials: DockerCredentials,
  sources: string[],
  secret: SecretObject,
  namespace: string,
): string | undefined {
  const name = `Secret ${namespace}/${secret.metadata.name}`;
  const key = CONFIG_KEYS[secret.type ?? ""];
  const encoded = key ? secret.data?.[key] : undefined;
  if (!key || encoded === undefined) {
    return `${name} is of type ${JSON.stringify(secret.type ?? "")}; an image pull Secret must be kubernetes.io/dockerconfigjson (or dockercfg) with its key`;
  }
  try {
    credentials.add(Buffer.from(encoded, "base64").toString("utf8"), name);
    sources.push(name);
    return undefined;
  } catch (err) {
    if (err instanceof DockerConfigError) return err.message;
    throw err;
  }
}

/** The object, or why it cannot be read (404, 403); other API failures throw (transient). */
async function getOrProblem<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<{ object: T } | { problem: string }> {
  try {
    return { object: await client.get<T>(type, namespace, name, signal) };
  } catch (err) {
    if (isApiError(err, 404)) return { problem: `${type.kind} ${namespace}/${name} not found` };
    if (isApiError(err, 403)) {
      return {
        problem: `the bundle resolver may not read ${type.kind} ${namespace}/${name} (RBAC: bind quarry-bundle-resolver-credentials in ${namespace})`,
      };
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
