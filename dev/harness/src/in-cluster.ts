// What the in-cluster suite (e2e/in-cluster, `pnpm test:e2e:cluster`) needs
// beyond the other scenarios: the services' images imported into the test
// node's containerd, helm against the shared control plane, and reading the
// fleet's pods (their /metrics and /readyz over the pod network).
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { kinds } from "@quarry/devcluster/kinds";
import { buildServiceImage } from "@quarry/image-builder/build-layout";
import type { KubeClient, KubeObject } from "@quarry/kube";
import { sharedControlPlane } from "./env.ts";
import { helm as helmBinary, repoRoot, runHelm, services } from "./helm.ts";

export { sumMetric } from "./metrics.ts";

import { waitUntil } from "@quarry/devcluster/wait";
import type { Pod, SharedNode } from "./node.ts";

const run = promisify(execFile);

export type Service = (typeof services)[number];
export { services };

/** Builds (or finds cached) each service's image and imports it into the node's containerd; returns the names. */
export async function importServiceImages(
  node: SharedNode,
  which: readonly string[] = services,
): Promise<Record<string, string>> {
  const ctr = ["--address", join(node.dir, "containerd.sock"), "--namespace", "k8s.io"];
  const names: Record<string, string> = {};
  // one at a time: each build runs pnpm deploy and gzips ~250 MB on a 2-core machine
  for (const service of which) {
    const built = await buildServiceImage(service);
    await run("ctr", [...ctr, "images", "import", built.tar]);
    names[service] = built.name;
  }
  const listed = (await run("ctr", [...ctr, "images", "list", "--quiet"])).stdout.split("\n");
  for (const name of Object.values(names))
    if (!listed.includes(name)) throw new Error(`ctr did not list ${name}`);
  return names;
}

/** helm against the shared control plane as its admin (helm reads a kubeconfig, as an operator's does). */
export function helm(args: string[]): string {
  return runHelm([...args, "--kubeconfig", sharedControlPlane().adminKubeconfig]);
}

/** helm as above, without blocking the test's event loop (work goes on while it runs). */
export async function helmAsync(args: string[]): Promise<string> {
  const { stdout } = await run(
    helmBinary(),
    [...args, "--kubeconfig", sharedControlPlane().adminKubeconfig],
    {
      cwd: repoRoot,
      maxBuffer: 64 << 20,
    },
  );
  return stdout;
}

interface Deployment extends KubeObject {
  spec: { replicas?: number };
  status?: {
    replicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
  };
}

/** Waits until every Deployment in `namespace` (or those named) has all its replicas available and updated. */
export async function waitDeploymentsAvailable(
  admin: KubeClient,
  namespace: string,
  names?: string[],
  timeoutMs = 180_000,
): Promise<void> {
  await waitUntil(
    `Deployments in ${namespace} available`,
    async () => {
      const all = (await admin.list<Deployment>(kinds.Deployment!, namespace)).items;
      const ds = names ? all.filter((d) => names.includes(d.metadata.name ?? "")) : all;
      if (names && ds.length < names.length) return false;
      return ds.every((d) => {
        const want = d.spec.replicas ?? 1;
        const s = d.status ?? {};
        return s.availableReplicas === want && s.updatedReplicas === want && s.replicas === want;
      });
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** The running, Ready pods of one service's Deployment. */
export async function servicePods(admin: KubeClient, namespace: string, service: string): Promise<Pod[]> {
  const list = await admin.list<Pod>(kinds.Pod!, namespace, {
    labelSelector: `app.kubernetes.io/name=${service}`,
  });
  return list.items.filter(
    (p) =>
      !p.metadata.deletionTimestamp &&
      p.status?.phase === "Running" &&
      p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
}

/** GET http://<pod IP>:8080<path>: the host reaches pods over the node's bridge, as the kubelet's probes do. */
export async function podGet(pod: Pod, path: string): Promise<string> {
  const ip = (pod.status as { podIP?: string } | undefined)?.podIP;
  if (!ip) throw new Error(`pod ${pod.metadata.name} has no IP yet`);
  const res = await fetch(`http://${ip}:8080${path}`, { signal: AbortSignal.timeout(5000) });
  return res.text();
}

/**
 * The last `lines` lines of every container log the kubelet keeps for `pod` (the node's
 * pod-logs directory, <namespace>_<name>_<uid>/<container>/<restart>.log), for a failing
 * assertion's message: the kubelet removes them with the pod.
 */
export function podLogTail(node: SharedNode, pod: Pod, lines = 200): string {
  const dir = join(
    node.dir,
    "pod-logs",
    `${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`,
  );
  if (!existsSync(dir)) return `(no logs for ${pod.metadata.name} under ${dir})`;
  const out: string[] = [];
  for (const container of readdirSync(dir).sort())
    for (const file of readdirSync(join(dir, container)).sort()) {
      const text = readFileSync(join(dir, container, file), "utf8")
        .trimEnd()
        .split("\n");
      out.push(`--- ${pod.metadata.name}/${container}/${file}`, ...text.slice(-lines));
    }
  return out.join("\n");
}

/**
 * What a helm release left: namespaced objects in `namespace` (but the namespace's own default
 * ServiceAccount and kube-root-ca.crt), and ClusterRoles and ClusterRoleBindings named `prefix…`.
 */
export async function releaseLeftovers(
  admin: KubeClient,
  namespace: string,
  prefix: string,
): Promise<string[]> {
  const left: string[] = [];
  const namespaced = [
    "Deployment",
    "ReplicaSet",
    "Pod",
    "ServiceAccount",
    "ConfigMap",
    "Service",
    "Role",
    "RoleBinding",
    "Lease",
  ];
  for (const kind of namespaced)
    for (const o of (await admin.list<KubeObject>(kinds[kind]!, namespace)).items)
      if (
        !(kind === "ServiceAccount" && o.metadata.name === "default") &&
        o.metadata.name !== "kube-root-ca.crt"
      )
        left.push(`${kind} ${o.metadata.name}`);
  for (const kind of ["ClusterRole", "ClusterRoleBinding"])
    for (const o of (await admin.list<KubeObject>(kinds[kind]!, undefined)).items)
      if (o.metadata.name?.startsWith(prefix)) left.push(`${kind} ${o.metadata.name}`);
  return left;
}
