// Several replicas of one service as separate real processes under the
// service's one identity (as a Deployment's pods share a ServiceAccount),
// each with its own POD_NAME and log file, and what a test reads from them:
// the buckets they hold (/readyz), their metrics, the bucket Leases.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { type RunningService, startService } from "@quarry/devcluster/service";
import { waitUntil } from "@quarry/devcluster/wait";
import { bucketLeaseName, bucketOf, type KubeClient, type Lease, leases } from "@quarry/kube";
import { sumMetric } from "./metrics.ts";
import { resolvedOk, type Scenario } from "./scenario.ts";

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

/** Requests of `type` a replica resolved with outcome succeeded (its resolution histogram's count). */
export function resolvedBy(r: Replica, type: string): Promise<number> {
  return metricSum(r, "quarry_resolution_duration_seconds_count", { type, outcome: "succeeded" });
}

/** Watch events of requests outside its buckets a replica dropped unparsed. */
export function skippedEvents(r: Replica): Promise<number> {
  return metricSum(r, "quarry_informer_events_skipped_total", { resource: "resolutionrequests" });
}

/** Which replica holds each bucket Lease, from the replicas' own /readyz. */
export async function bucketOwners(live: readonly Replica[]): Promise<Map<string, string>> {
  const byLease = new Map<string, string>();
  for (const r of live) for (const b of await heldBuckets(r)) byLease.set(b, r.name);
  return byLease;
}

/** How many of `batch` (request names in `namespace`) each replica's buckets predict it resolves. */
export function predictedPerReplica(
  live: readonly Replica[],
  owners: ReadonlyMap<string, string>,
  opts: { service: string; buckets: number; namespace: string; batch: readonly string[] },
): number[] {
  const leaseOf = (name: string) =>
    bucketLeaseName(opts.service, bucketOf(`${opts.namespace}/${name}`, opts.buckets), opts.buckets);
  return live.map((r) => opts.batch.filter((n) => owners.get(leaseOf(n)) === r.name).length);
}

/**
 * Asserts each replica resolved exactly what its buckets predicted between the counts `before` and
 * `after` (resolvedBy), and that every replica had some of the work.
 */
export function assertResolvedAsPredicted(
  live: readonly Replica[],
  before: readonly number[],
  after: readonly number[],
  expected: readonly number[],
): void {
  assert.deepEqual(
    after.map((n, i) => n - before[i]!),
    expected,
    `requests resolved per replica (${live.map((r) => r.name).join(", ")})`,
  );
  assert.ok(
    expected.every((n) => n > 0),
    `every replica had work: ${expected.join(", ")}`,
  );
}

/** Waits until every request of `batch` in the scenario's namespace has Succeeded=True. */
export async function allResolved(
  scn: Scenario,
  batch: readonly string[],
  timeoutMs = 45_000,
): Promise<void> {
  await waitUntil(
    `${batch.length} requests to resolve`,
    async () => {
      const list = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace);
      const ok = new Set(list.items.filter(resolvedOk).map((r) => r.metadata.name));
      return batch.every((n) => ok.has(n));
    },
    { timeoutMs, intervalMs: 250 },
  );
}
