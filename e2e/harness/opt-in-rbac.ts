// Rules a service's chart ships but does not grant by default (a resolver's
// access to credentials): a namespace opts in by binding them to the
// service's ServiceAccount there. Tests grant them the way an admin would.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import yaml from "js-yaml";
import { applyObject } from "./apply.ts";
import { repoRoot } from "./paths.ts";
import type { Scenario } from "./scenario.ts";

/** Binds `charts/<service>/rbac.yaml`'s `rulesKey` as ClusterRole `role` in `namespace`. */
export async function grantOptInRules(
  scn: Scenario,
  opts: { service: string; rulesKey: string; role: string; namespace?: string },
): Promise<void> {
  const rbac = yaml.load(readFileSync(join(repoRoot, "charts", opts.service, "rbac.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
  const rules = rbac[opts.rulesKey];
  if (!Array.isArray(rules)) throw new Error(`charts/${opts.service}/rbac.yaml has no ${opts.rulesKey}`);
  await applyObject(scn.admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: opts.role },
    rules,
  });
  await applyObject(scn.admin, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: opts.role, namespace: opts.namespace ?? scn.namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: opts.role },
    subjects: [{ kind: "ServiceAccount", name: String(rbac.serviceAccountName), namespace: scn.namespace }],
  });
}
