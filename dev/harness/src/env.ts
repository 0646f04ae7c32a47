// What an e2e test file gets from the runner (e2e/run.ts): the shared control
// plane's address and admin credentials, through the environment.

import type { ClusterAccess } from "@quarry/devcluster/scenario";
import { type KubeClient, RestKubeClient } from "@quarry/kube";

export type SharedControlPlane = ClusterAccess;

export function sharedControlPlane(): SharedControlPlane {
  const server = process.env.QUARRY_E2E_SERVER;
  const caFile = process.env.QUARRY_E2E_CA;
  const dir = process.env.QUARRY_E2E_DIR;
  const adminKubeconfig = process.env.QUARRY_E2E_KUBECONFIG;
  if (!server || !caFile || !dir || !adminKubeconfig) {
    throw new Error("e2e tests run under e2e/run.ts, which starts the control plane (pnpm test:e2e)");
  }
  return { server, caFile, dir, adminKubeconfig };
}

export function adminClient(cp: SharedControlPlane = sharedControlPlane()): KubeClient {
  return RestKubeClient.fromEnvironment(cp.adminKubeconfig);
}
