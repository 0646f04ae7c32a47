import assert from "node:assert/strict";
import { test } from "node:test";
import { SHARD_COUNT, shardCel, shardOfName, shardSelector } from "./shard.ts";

test("a name's shard is pinned (replicas of two versions must agree on it mid-rollout)", () => {
  assert.deepEqual(
    ["a", "build", "git-6c3f0a9e2b7d41d58e3a0f1c2b9d7e64", "x".repeat(300)].map(shardOfName),
    [123, 228, 65, 34],
  );
  assert.equal(shardOfName(""), 0);
  for (const n of ["a", "build", "z.z-9"]) assert.ok(shardOfName(n) >= 0 && shardOfName(n) < SHARD_COUNT);
});

test("changing any one character of a name changes its shard", () => {
  const name = "git-6c3f0a9e2b7d41d58e3a0f1c2b9d7e64";
  for (let i = 0; i < name.length; i++) {
    const other = `${name.slice(0, i)}${name[i] === "a" ? "b" : "a"}${name.slice(i + 1)}`;
    assert.notEqual(shardOfName(other), shardOfName(name), `position ${i}`);
  }
});

test("names spread evenly over the shards and over 3, 6 and 64 buckets", () => {
  const hex = (i: number) => ((i * 2654435761 + 0x5bd1e995) >>> 0).toString(16).padStart(8, "0");
  const families: Record<string, (i: number) => string> = {
    "tekton request names": (i) => `git-${hex(i)}${hex(i * 7 + 1)}`,
    "sequential names": (i) => `req-${i}`,
    "runs of one pipeline task": (i) => `build-${hex(i).slice(0, 5)}-fetch-source`,
  };
  const names = 30_000;
  for (const [family, nameOf] of Object.entries(families)) {
    for (const count of [3, 6, 64]) {
      const seen = new Array<number>(count).fill(0);
      for (let i = 0; i < names; i++) seen[shardOfName(nameOf(i)) % count]!++;
      const share = names / count;
      const worst = Math.max(...seen.map((n) => Math.abs(n - share) / share));
      // 64 buckets of 469 names each: a few standard deviations is ~15 %
      assert.ok(worst < (count === 64 ? 0.2 : 0.06), `${family}, ${count} buckets: ${seen.join(",")}`);
    }
  }
});

test("the CEL expression computes the same sum with the same weights", () => {
  const cel = shardCel("object.metadata.name");
  const weights = cel
    .match(/\[([0-9,]+)\]\[i\]/)![1]!
    .split(",")
    .map(Number);
  const alphabet = cel.match(/'([^']+)'\.indexOf/)![1]!;
  assert.equal(weights.length, 253);
  assert.ok(weights.every((w) => w % 2 === 1 && w < 256));
  for (const name of ["a", "git-6c3f0a9e2b7d41d58e3a0f1c2b9d7e64", "ns.with-dots.0"]) {
    const sum = [...name].reduce((s, c, i) => s + weights[i]! * (alphabet.indexOf(c) + 1), 0);
    assert.equal(sum % SHARD_COUNT, shardOfName(name));
  }
  assert.match(cel, /^object\.metadata\.name\.split\(''\)\.transformList\(i, c, /);
});

test("the selector excludes the shards not wanted and keeps unlabelled objects", () => {
  assert.equal(
    shardSelector(() => true),
    undefined,
  );
  const sel = shardSelector((s) => s % 4 !== 0)!;
  assert.match(sel, /^quarry\.dev\/shard notin \(0,4,8,/);
  assert.equal(sel.split(",").length, SHARD_COUNT / 4);
});
