import assert from "node:assert/strict";
import { test } from "node:test";
import { shardOfName } from "@quarry/api";
import { bucketLeaseName, bucketOf, leaseBase, memberLeaseName, shardsOf } from "./bucket-hash.ts";

test("a key's bucket is its name's shard modulo the count (every replica agrees)", () => {
  // pinned: a change here moves keys between replicas running different versions mid-rollout
  assert.deepEqual(
    ["ns/a", "default/build", "x/git-6c3f0a9e2b7d41d58e3a0f1c2b9d7e64"].map((k) => [
      bucketOf(k, 3),
      bucketOf(k, 10),
    ]),
    [
      [123 % 3, 123 % 10],
      [228 % 3, 228 % 10],
      [65 % 3, 65 % 10],
    ],
  );
  assert.equal(bucketOf("anything", 1), 0);
  assert.equal(bucketOf("a", 3), bucketOf("other-namespace/a", 3), "the namespace does not count");
});

test("keys spread evenly: each of 3 and of 6 buckets gets its share within 10%", () => {
  for (const count of [3, 6]) {
    const seen = new Array<number>(count).fill(0);
    const keys = 30_000;
    for (let i = 0; i < keys; i++) seen[bucketOf(`e2e-${i % 7}a3f/req-${i}`, count)]!++;
    for (const n of seen) assert.ok(Math.abs(n - keys / count) < keys / count / 10, `${seen.join(",")}`);
  }
});

test("a set of buckets holds exactly the shards whose keys it owns", () => {
  const wanted = shardsOf(new Set([1, 4]), 6);
  for (const key of ["ns/a", "ns/build", "ns/req-17", "ns/req-18"]) {
    const shard = shardOfName(key.slice(3));
    assert.equal(wanted(shard), [1, 4].includes(bucketOf(key, 6)), key);
  }
  assert.equal([...Array(256).keys()].filter(wanted).length, 43 + 42);
});

test("Lease names: DNS-1123, the service's name, the ordinal and the count", () => {
  assert.equal(bucketLeaseName("cluster-resolver", 0, 3), "cluster-resolver.00-of-03");
  assert.equal(bucketLeaseName("git+bundles-resolver", 11, 12), "git-bundles-resolver.11-of-12");
  assert.match(memberLeaseName("cluster-resolver", "Pod_A"), /^cluster-resolver\.member\.[0-9a-f]{12}$/);
  assert.notEqual(memberLeaseName("s", "a"), memberLeaseName("s", "b"));
  assert.equal(leaseBase("Lifecycle_Controller"), "lifecycle-controller");
  assert.throws(() => leaseBase("+++"), /nothing usable/);
});
