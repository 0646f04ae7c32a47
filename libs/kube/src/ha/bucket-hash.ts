// Which bucket a key belongs to, and what the buckets' Leases are called.
//
// A key goes to the bucket with the highest score of a rendezvous hash
// (highest random weight): every replica computes the same answer from the key
// alone, keys spread evenly, and growing N buckets to N+1 moves only the keys
// the new bucket wins (about 1/(N+1) of them), the consistency knative's
// hash.BucketSet gives. Computing it is a handful of integer operations per
// bucket, cheap enough to run on every enqueue.
import { createHash } from "node:crypto";

/** Most buckets a service may have: every replica reads every bucket's Lease every retry period. */
export const MAX_BUCKETS = 64;

/** The bucket (0-based) of `key` among `count` buckets. */
export function bucketOf(key: string, count: number): number {
  if (count <= 1) return 0;
  const h = fnv1a(key);
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < count; i++) {
    const score = mix(h ^ mix(i + 0x9e3779b9));
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

/** FNV-1a over the key's UTF-16 code units (keys are namespace/name: ASCII in practice). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function mix(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
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
