// Gives a Quarry service its own ServiceAccount identity, bound to the RBAC
// rules its chart ships (charts/<service>/rbac.yaml), and a kubeconfig with a
// real service-account token, so tests exercise exactly the shipped RBAC.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type KubeClient, RestKubeClient } from "@quarry/kube";
import yaml from "js-yaml";
import { applyObject } from "./apply.ts";
import { kubeconfigFor } from "./controlplane.ts";
import { kinds } from "./kinds.ts";
import { repoRoot } from "./paths.ts";

interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface ServiceRbac {
  serviceAccountName: string;
  clusterRules: RbacRule[];
  namespaceRules: RbacRule[];
}

export function loadServiceRbac(service: string): ServiceRbac {
  return yaml.load(readFileSync(join(repoRoot, "charts", service, "rbac.yaml"), "utf8")) as ServiceRbac;
}

export interface ServiceIdentity {
  serviceAccount: string;
  namespace: string;
  kubeconfig: string;
  client: KubeClient;
}

export interface ControlPlaneInfo {
  server: string;
  caFile: string;
  dir: string;
}

/** Creates the service's ServiceAccount in `namespace` and binds its shipped rules. */
export async function createServiceIdentity(
  admin: KubeClient,
  cp: ControlPlaneInfo,
  service: string,
  namespace: string,
): Promise<ServiceIdentity> {
  const sa = loadServiceRbac(service).serviceAccountName;
  await applyObject(admin, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace } });
  await bindServiceRules(admin, service, namespace, sa);
  const kubeconfig = await tokenKubeconfig(admin, cp, namespace, sa, `${service}-${namespace}`, service);
  return { serviceAccount: sa, namespace, kubeconfig, client: RestKubeClient.fromEnvironment(kubeconfig) };
}

/**
 * Binds `service`'s shipped rules (ClusterRole and Role `quarry-<service>`) to ServiceAccount `sa`
 * in `namespace`: its own, or that of a process hosting several services' code, which gets the
 * union of their charts' rules and nothing more.
 */
export async function bindServiceRules(
  admin: KubeClient,
  service: string,
  namespace: string,
  sa: string,
): Promise<void> {
  const rbac = loadServiceRbac(service);
  const role = `quarry-${service}`;
  const subjects = [{ kind: "ServiceAccount", name: sa, namespace }];
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: role },
    rules: rbac.clusterRules,
  });
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `${role}-${namespace}`, labels: { "quarry.dev/test-namespace": namespace } },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  });
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: role, namespace },
    rules: rbac.namespaceRules,
  });
  await applyObject(admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: role, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
    subjects,
  });
}

/** Removes the cluster-scoped binding made for `namespace` (namespace deletion removes the rest). */
export async function deleteServiceIdentity(admin: KubeClient, service: string, namespace: string) {
  await admin.delete(kinds.ClusterRoleBinding!, undefined, `quarry-${service}-${namespace}`).catch(() => {});
}

/**
 * A kubeconfig at `<cp.dir>/<file>.kubeconfig` with a 4 h TokenRequest token of ServiceAccount
 * `sa` in `namespace`; its user is named `<user>@<namespace>`.
 */
export async function tokenKubeconfig(
  admin: KubeClient,
  cp: ControlPlaneInfo,
  namespace: string,
  sa: string,
  file = sa,
  user = sa,
): Promise<string> {
  const tr = await admin.create(
    kinds.ServiceAccount!,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      metadata: { namespace },
      spec: { expirationSeconds: 4 * 3600 },
    },
    { name: sa, subresource: "token" },
  );
  const token = (tr as unknown as { status: { token: string } }).status.token;
  const path = join(cp.dir, `${file}.kubeconfig`);
  writeFileSync(path, kubeconfigFor(cp.server, cp.caFile, `${user}@${namespace}`, token));
  return path;
}
