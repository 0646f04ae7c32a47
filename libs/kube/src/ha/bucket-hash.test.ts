import assert from "node:assert/strict";
import { test } from "node:test";
import { bucketLeaseName, bucketOf, leaseBase, memberLeaseName } from "./bucket-hash.ts";

test("a key's bucket is a pure function of the key and the count (every replica agrees)", () => {
  // pinned: a change here moves keys between replicas running different versions mid-rollout
  assert.deepEqual(
    ["ns/a", "default/build", "x/y"].map((k) => [bucketOf(k, 3), bucketOf(k, 10)]),
    [
      [0, 0],
      [2, 5],
      [0, 4],
    ],
  );
  assert.equal(bucketOf("anything", 1), 0);
});

test("keys spread evenly: each of 3 and of 6 buckets gets its share within 10%", () => {
  for (const count of [3, 6]) {
    const seen = new Array<number>(count).fill(0);
    const keys = 30_000;
    for (let i = 0; i < keys; i++) seen[bucketOf(`e2e-${i % 7}a3f/req-${i}`, count)]!++;
    for (const n of seen) assert.ok(Math.abs(n - keys / count) < keys / count / 10, `${seen.join(",")}`);
  }
});

test("one more bucket moves only the keys the new bucket wins, about 1/(N+1) of them", () => {
  let moved = 0;
  const keys = 20_000;
  for (let i = 0; i < keys; i++) {
    const before = bucketOf(`ns/r${i}`, 5);
    const after = bucketOf(`ns/r${i}`, 6);
    if (before === after) continue;
    moved++;
    assert.equal(after, 5, "a key that moves goes to the new bucket");
  }
  assert.ok(Math.abs(moved / keys - 1 / 6) < 0.02, `moved ${moved}`);
});

test("Lease names: DNS-1123, the service's name, the ordinal and the count", () => {
  assert.equal(bucketLeaseName("cluster-resolver", 0, 3), "cluster-resolver.00-of-03");
  assert.equal(bucketLeaseName("git+bundles-resolver", 11, 12), "git-bundles-resolver.11-of-12");
  assert.match(memberLeaseName("cluster-resolver", "Pod_A"), /^cluster-resolver\.member\.[0-9a-f]{12}$/);
  assert.notEqual(memberLeaseName("s", "a"), memberLeaseName("s", "b"));
  assert.equal(leaseBase("Lifecycle_Controller"), "lifecycle-controller");
  assert.throws(() => leaseBase("+++"), /nothing usable/);
});
