// `quarry doctor`'s reading: everything doctor.ts decides on, fetched at once,
// a 403 recorded as unreadable rather than failing the whole check.
import {
  lifecycleDeletesPolicy,
  lifecycleWritesPolicy,
  type ResolutionRequest,
  resolutionRequests,
  resolverLabelPolicy,
  resolverWritesPolicies,
} from "@quarry/api";
import {
  isApiError,
  type KubeClient,
  type KubeObject,
  type Lease,
  leases,
  type ResourceType,
} from "@quarry/kube";
import { type Observed, REQUIRED_CRDS, type Read, type RoleBinding } from "./doctor.ts";
import { serverMessage } from "./errors.ts";
import { type Deployment, deployments, FLEET_SELECTOR } from "./version.ts";

const crds: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};
const policyKinds: Readonly<Record<string, ResourceType>> = {
  ValidatingAdmissionPolicy: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    plural: "validatingadmissionpolicies",
    kind: "ValidatingAdmissionPolicy",
    namespaced: false,
  },
  ValidatingAdmissionPolicyBinding: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    plural: "validatingadmissionpolicybindings",
    kind: "ValidatingAdmissionPolicyBinding",
    namespaced: false,
  },
};
const roleBindings: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "rolebindings",
  kind: "RoleBinding",
  namespaced: true,
};

export const TEKTON_RESOLVERS = {
  namespace: "tekton-pipelines-resolvers",
  name: "tekton-pipelines-remote-resolvers",
};

/** The result, or why it could not be read (403 and the like); other errors propagate. */
async function readable<T>(p: Promise<T>): Promise<Read<T>> {
  try {
    return await p;
  } catch (e) {
    if (isApiError(e) && (e.status === 403 || e.status === 401 || e.status === 404))
      return { unreadable: serverMessage(e) };
    throw e;
  }
}

async function exists(client: KubeClient, rt: ResourceType, name: string): Promise<boolean> {
  try {
    await client.get<KubeObject>(rt, undefined, name);
    return true;
  } catch (e) {
    if (isApiError(e, 404)) return false;
    throw e;
  }
}

export async function observe(client: KubeClient, systemNamespace: string): Promise<Observed> {
  const expectedPolicies = [
    ...resolverLabelPolicy(),
    ...lifecycleWritesPolicy(),
    ...lifecycleDeletesPolicy(),
    ...resolverWritesPolicies(),
  ];
  const [crdPresence, policies, deps, leaseList, tekton, requests, bindings] = await Promise.all([
    Promise.all(Object.keys(REQUIRED_CRDS).map(async (n) => [n, await exists(client, crds, n)] as const)),
    readable(
      Promise.all(
        expectedPolicies.map(async (m) => {
          const name = (m.metadata as { name: string }).name;
          return [`${m.kind}/${name}`, await exists(client, policyKinds[m.kind]!, name)] as const;
        }),
      ).then((pairs) => Object.fromEntries(pairs)),
    ),
    readable(
      client
        .list<Deployment>(deployments, systemNamespace, { labelSelector: FLEET_SELECTOR })
        .then((l) => l.items),
    ),
    readable(
      client
        .list<Lease>(leases, systemNamespace, { labelSelector: "app.kubernetes.io/managed-by=quarry" })
        .then((l) => l.items),
    ),
    readable(
      client
        .get<Deployment>(deployments, TEKTON_RESOLVERS.namespace, TEKTON_RESOLVERS.name)
        .catch((e: unknown) => {
          if (isApiError(e, 404)) return undefined;
          throw e;
        }),
    ),
    readable(client.list<ResolutionRequest>(resolutionRequests, undefined).then((l) => l.items)),
    readable(client.list<RoleBinding>(roleBindings, undefined).then((l) => l.items)),
  ]);
  return {
    systemNamespace,
    crds: Object.fromEntries(crdPresence),
    policies,
    deployments: deps,
    leases: leaseList,
    tektonResolvers: tekton,
    requests,
    roleBindings: bindings,
  };
}
