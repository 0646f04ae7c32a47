// Several replicas of one service as separate real processes under the
// service's one identity (as a Deployment's pods share a ServiceAccount),
// each with its own POD_NAME and log file, and what a test reads from them:
// the buckets they hold (/readyz), their metrics, the bucket Leases.
import { join } from "node:path";
import { type RunningService, startService } from "@quarry/devcluster/service";
import { type KubeClient, type Lease, leases } from "@quarry/kube";
import { sumMetric } from "./metrics.ts";
import type { Scenario } from "./scenario.ts";

export interface Replica {
  name: string;
  svc: RunningService;
}

/** Starts replica `name` of `service` (POD_NAME=name); cleaned up with the scenario. */
export async function startReplica(
  scn: Scenario,
  service: string,
  name: string,
  env: Record<string, string>,
): Promise<Replica> {
  const id = await scn.identity(service);
  const svc = await startService(service, {
    kubeconfig: id.kubeconfig,
    logFile: join(scn.cp.dir, "logs", `${scn.namespace}-${name}.log`),
    env: {
      QUARRY_SYSTEM_NAMESPACE: scn.namespace,
      QUARRY_WATCH_NAMESPACE: scn.namespace,
      POD_NAME: name,
      ...env,
    },
  });
  scn.services.push(svc);
  return { name, svc };
}

/** The bucket Leases a replica says it holds, from its /readyz body. */
export async function heldBuckets(r: Replica): Promise<string[]> {
  const res = await r.svc.ops("/readyz");
  const body = JSON.parse(res.body) as { buckets?: { held: string[] } };
  return body.buckets?.held ?? [];
}

/** Sum of a metric's series (`name` exactly, e.g. a histogram's `_count`) whose labels include `labels`. */
export async function metricSum(
  r: Replica,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return sumMetric((await r.svc.ops("/metrics")).body, name, labels);
}

/** Holder of every bucket Lease of `service` in the namespace, by Lease name ("" when released). */
export async function bucketHolders(admin: KubeClient, namespace: string): Promise<Map<string, string>> {
  const list = await admin.list<Lease>(leases, namespace, { labelSelector: "quarry.dev/lease=bucket" });
  return new Map(list.items.map((l) => [l.metadata.name ?? "", l.spec?.holderIdentity ?? ""]));
}
