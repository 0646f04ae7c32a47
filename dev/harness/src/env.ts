// What an e2e test file gets from the runner (e2e/run.ts): the shared control
// plane's address and admin credentials, through the environment.

import { SERVICE_MODES, type ServiceMode } from "@quarry/devcluster/all-in-one";
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

/**
 * The mode the runner runs this file in (QUARRY_E2E_MODE, set by `e2e/run.ts --mode`): `fleet`
 * (unset) or `all-in-one`, where the services a scenario starts that are components of the
 * all-in-one process run in one (docs/testing.md, "Both modes").
 */
export function e2eMode(): ServiceMode {
  const mode = process.env.QUARRY_E2E_MODE || "fleet";
  if (!(SERVICE_MODES as readonly string[]).includes(mode))
    throw new Error(`QUARRY_E2E_MODE must be one of ${SERVICE_MODES.join(", ")}, not ${mode}`);
  return mode as ServiceMode;
}
