// Rules a service's chart ships but does not grant by default (a resolver's
// access to credentials): a namespace opts in by binding them to the
// service's ServiceAccount there. Tests grant them the way an admin would,
// then wait until the apiserver's authorizer sees the binding (its RBAC cache
// lags a write by a moment; a test acting at once would see a stale 403).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject, ResourceType } from "@quarry/kube";
import yaml from "js-yaml";
import { ALL_IN_ONE_SA, isComponent } from "./all-in-one.ts";
import { applyObject } from "./apply.ts";
import { repoRoot } from "./paths.ts";
import type { Scenario } from "./scenario.ts";
import { waitUntil } from "./wait.ts";

const subjectAccessReviews: ResourceType = {
  group: "authorization.k8s.io",
  version: "v1",
  plural: "subjectaccessreviews",
  kind: "SubjectAccessReview",
  namespaced: false,
};

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

interface AccessReview extends KubeObject {
  spec: {
    user: string;
    groups: string[];
    resourceAttributes: { namespace: string; verb: string; group: string; resource: string };
  };
  status?: { allowed?: boolean };
}

/**
 * Binds `charts/<service>/rbac.yaml`'s `rulesKey` as ClusterRole `role` in `namespace`, to the
 * service's ServiceAccount in the scenario's namespace (quarry-all-in-one for a component in
 * all-in-one mode; or `serviceAccount`, a process hosting several services' code).
 */
export async function grantOptInRules(
  scn: Scenario,
  opts: { service: string; rulesKey: string; role: string; namespace?: string; serviceAccount?: string },
): Promise<void> {
  const rbac = yaml.load(readFileSync(join(repoRoot, "charts", opts.service, "rbac.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
  const rules = rbac[opts.rulesKey] as Rule[] | undefined;
  if (!Array.isArray(rules)) throw new Error(`charts/${opts.service}/rbac.yaml has no ${opts.rulesKey}`);
  const namespace = opts.namespace ?? scn.namespace;
  // in all-in-one mode a component runs as quarry-all-in-one: the namespace opts that in too (and
  // the service's own, which the files checking its chart's rules read in either mode)
  const sas = opts.serviceAccount
    ? [opts.serviceAccount]
    : scn.mode === "all-in-one" && isComponent(opts.service)
      ? [String(rbac.serviceAccountName), ALL_IN_ONE_SA]
      : [String(rbac.serviceAccountName)];
  await applyObject(scn.admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: opts.role },
    rules,
  });
  await applyObject(scn.admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: opts.role, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: opts.role },
    subjects: sas.map((name) => ({ kind: "ServiceAccount", name, namespace: scn.namespace })),
  });
  for (const sa of sas) await authorized(scn, rules, namespace, sa);
}

/** Waits until the apiserver's authorizer lets `sa` do the first verb of each rule in `namespace`. */
async function authorized(scn: Scenario, rules: Rule[], namespace: string, sa: string): Promise<void> {
  const user = `system:serviceaccount:${scn.namespace}:${sa}`;
  for (const rule of rules) {
    for (const resource of rule.resources) {
      const review: AccessReview = {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        metadata: {},
        spec: {
          user,
          groups: [
            "system:serviceaccounts",
            `system:serviceaccounts:${scn.namespace}`,
            "system:authenticated",
          ],
          resourceAttributes: {
            namespace,
            verb: rule.verbs[0] ?? "get",
            group: rule.apiGroups[0] ?? "",
            resource,
          },
        },
      };
      await waitUntil(
        `${user} may ${review.spec.resourceAttributes.verb} ${resource} in ${namespace}`,
        async () => {
          const answer = await scn.admin.create<AccessReview>(subjectAccessReviews, review);
          return answer.status?.allowed === true;
        },
      );
    }
  }
}
