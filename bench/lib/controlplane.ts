// The control plane every benchmark starts: etcd + kube-apiserver, their pids
// tracked for the hard stop, Quarry's API (and optionally Tekton's CRD
// stand-ins) installed, and an admin client.

import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi, installTektonCrds } from "@quarry/devcluster/install";
import { adminClient, type SharedControlPlane } from "@quarry/harness/env";
import type { KubeClient } from "@quarry/kube";
import { childPids } from "./proc.ts";
import { type BoundedRun, log } from "./run.ts";

export interface BenchControlPlane {
  cp: ControlPlane;
  pids: { "kube-apiserver": number | undefined; etcd: number | undefined };
  info: SharedControlPlane;
  admin: KubeClient;
}

/** `onStarted` gets the control plane as soon as it runs, so the caller's teardown can stop it if installing fails. */
export async function startBenchControlPlane(
  run: BoundedRun,
  onStarted: (cp: ControlPlane) => void,
  opts: {
    tekton?: boolean;
    auditLog?: boolean;
    runCrds?: NonNullable<Parameters<typeof installQuarryApi>[1]>["runCrds"];
  } = {},
): Promise<BenchControlPlane> {
  const cp = await startControlPlane({ log: (m) => log(`controlplane: ${m}`), auditLog: opts.auditLog });
  onStarted(cp);
  const pids = {
    "kube-apiserver": childPids(process.pid, "kube-apiserver")[0],
    etcd: childPids(process.pid, "etcd")[0],
  };
  for (const pid of Object.values(pids)) run.track(pid);
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  const admin = adminClient(info);
  await installQuarryApi(admin, opts.runCrds ? { runCrds: opts.runCrds } : undefined);
  if (opts.tekton) await installTektonCrds(admin);
  return { cp, pids, info, admin };
}
