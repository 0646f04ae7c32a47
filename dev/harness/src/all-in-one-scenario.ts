// Starts services/all-in-one (every component on one ServiceRuntime) in a
// scenario, as a real process under ServiceAccount quarry-all-in-one holding
// the union of the components' chart rules, as the umbrella chart's all-in-one
// mode binds them. That name is no component's own, so none of the
// quarry-<component>-writes admission policies applies to it.
import { applyObject } from "@quarry/devcluster/apply";
import { bindServiceRules, tokenKubeconfig } from "@quarry/devcluster/identity";
import type { RunningService } from "@quarry/devcluster/service";
import { RestKubeClient } from "@quarry/kube";
import type { Scenario } from "./scenario.ts";

export const ALL_IN_ONE_SA = "quarry-all-in-one";

/** The charts whose rules the process holds: every component QUARRY_COMPONENTS can name. */
export const ALL_IN_ONE_CHARTS = [
  "lifecycle-controller",
  "run-controller",
  "cluster-resolver",
  "git-resolver",
  "bundle-resolver",
  "pipe-resolver",
  "http-resolver",
  "hub-resolver",
];

/**
 * The quarry-all-in-one ServiceAccount in the scenario's namespace, bound to every chart's rules,
 * and its kubeconfig; recorded under each chart's name so cleanup removes the bindings. Once per
 * scenario.
 */
export async function allInOneIdentity(scn: Scenario): Promise<void> {
  if (scn.identities.has("all-in-one")) return;
  const { namespace, admin } = scn;
  await applyObject(admin, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: ALL_IN_ONE_SA, namespace },
  });
  for (const chart of ALL_IN_ONE_CHARTS) await bindServiceRules(admin, chart, namespace, ALL_IN_ONE_SA);
  // a file of its own per namespace: concurrent scenarios' kubeconfigs must not collide
  const kubeconfig = await tokenKubeconfig(
    admin,
    scn.cp,
    namespace,
    ALL_IN_ONE_SA,
    `${ALL_IN_ONE_SA}-${namespace}`,
  );
  const id = {
    serviceAccount: ALL_IN_ONE_SA,
    namespace,
    kubeconfig,
    client: RestKubeClient.fromEnvironment(kubeconfig),
  };
  // cleanup removes the cluster-wide bindings of every identity it knows: each chart's
  for (const name of [...ALL_IN_ONE_CHARTS, "all-in-one"]) scn.identities.set(name, id);
}

export async function startAllInOne(
  scn: Scenario,
  env: Record<string, string> = {},
): Promise<RunningService> {
  await allInOneIdentity(scn);
  // discovery, eight ConfigMaps and every informer before /readyz: more than one service's start
  return scn.start("all-in-one", env, { identity: "all-in-one", readyTimeoutMs: 60_000 });
}
