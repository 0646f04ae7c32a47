// Which bucket a key belongs to, and what the buckets' Leases are called.
//
// A key's bucket is the shard of its name (@quarry/api shard.ts: one of 256,
// by a hash a MutatingAdmissionPolicy can compute too) modulo the bucket
// count: every replica computes the same answer from the key alone, the
// buckets get equal shares of the shards, and a replica can ask the apiserver
// for its buckets' shards only (QUARRY_SHARD_LABEL). A change of the count
// reassigns most keys; it also renames every bucket's Lease, so no replica
// relies on keys staying put.
import { createHash } from "node:crypto";
import { SHARD_COUNT, shardOfName } from "@quarry/api";

/** Most buckets a service may have: each holds at least four of the 256 shards. */
export const MAX_BUCKETS = 64;

/** The bucket (0-based) of a `count`-bucket service that a shard belongs to. */
export function bucketOfShard(shard: number, count: number): number {
  return count <= 1 ? 0 : shard % count;
}

/** The bucket (0-based) of `key` (`namespace/name` or `name`) among `count` buckets. */
export function bucketOf(key: string, count: number): number {
  if (count <= 1) return 0;
  return bucketOfShard(shardOfName(key.slice(key.indexOf("/") + 1)), count);
}

/** The shards whose keys are in one of `buckets` (of `count`). */
export function shardsOf(buckets: ReadonlySet<number>, count: number): (shard: number) => boolean {
  return (shard) => shard < SHARD_COUNT && buckets.has(bucketOfShard(shard, count));
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A service name made fit for Lease names and label values (`git+bundles-resolver` → `git-bundles-resolver`). */
export function leaseBase(service: string): string {
  const base = service
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50)
    .replace(/-+$/, "");
  if (!base) throw new Error(`service name ${JSON.stringify(service)} has nothing usable for a Lease name`);
  return base;
}

/**
 * `<service>.<NN>-of-<NN>` (knative's `<component>.<queue>.NN-of-NN` without the queue: one set
 * of buckets serves every controller of a process). The count is in the name, so replicas
 * configured with different counts (mid-rollout) never fight over one Lease that means two things.
 */
export function bucketLeaseName(service: string, index: number, count: number): string {
  const width = Math.max(2, String(count).length);
  const pad = (n: number) => String(n).padStart(width, "0");
  return checked(`${leaseBase(service)}.${pad(index)}-of-${pad(count)}`);
}

/** `<service>.member.<hash>`: the Lease by which a replica tells its peers it is there. */
export function memberLeaseName(service: string, identity: string): string {
  const hash = createHash("sha256").update(identity).digest("hex").slice(0, 12);
  return checked(`${leaseBase(service)}.member.${hash}`);
}

function checked(name: string): string {
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) throw new Error(`invalid Lease name ${name}`);
  return name;
}
