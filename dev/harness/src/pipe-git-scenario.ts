// Starts dev/harness/src/pipe-git-resolver.ts (the pipe and git resolvers on one
// work queue) in a scenario, as a real process under a ServiceAccount of its
// own holding both charts' rules and the namespace's pipe opt-in. Not the pipe
// resolver's: the apiserver holds each resolver's ServiceAccount to its own
// request type (the quarry-<resolver>-writes admission policies), so the pipe
// resolver's could not write a git request's status.
import { join } from "node:path";
import { applyObject } from "@quarry/devcluster/apply";
import { bindServiceRules, tokenKubeconfig } from "@quarry/devcluster/identity";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { repoRoot } from "@quarry/devcluster/paths";
import type { RunningService } from "@quarry/devcluster/service";
import { RestKubeClient } from "@quarry/kube";
import { NAMESPACE_ROLE } from "@quarry/pipe-resolver/resolver";
import type { Scenario } from "./scenario.ts";

const ENTRY = join(repoRoot, "dev", "harness", "src", "pipe-git-resolver.ts");
/** Not a resolver's ServiceAccount name, so no resolver's type policy matches it. */
const SA = "quarry-pipe-git-resolver";

export async function startPipeGitResolver(
  scn: Scenario,
  env: Record<string, string>,
): Promise<RunningService> {
  const { namespace, admin } = scn;
  await applyObject(admin, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: SA, namespace } });
  for (const service of ["pipe-resolver", "git-resolver"])
    await bindServiceRules(admin, service, namespace, SA);
  const kubeconfig = await tokenKubeconfig(admin, scn.cp, namespace, SA);
  const id = {
    serviceAccount: SA,
    namespace,
    kubeconfig,
    client: RestKubeClient.fromEnvironment(kubeconfig),
  };
  // cleanup removes the cluster-wide bindings of every identity it knows: both services'
  for (const service of ["pipe-resolver", "git-resolver", "pipe-git-resolver"])
    scn.identities.set(service, id);
  await grantOptInRules(scn, {
    service: "pipe-resolver",
    rulesKey: "pipeNamespaceRules",
    role: NAMESPACE_ROLE,
    serviceAccount: SA,
  });
  return scn.start("pipe-git-resolver", env, { entry: ENTRY, identity: "pipe-git-resolver" });
}
