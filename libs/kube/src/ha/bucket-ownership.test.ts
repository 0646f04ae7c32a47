// BucketOwnership's promote and demote driven by hand (the BucketSet is made
// but never started): what the filtered caches, queues and replays see when a
// bucket is gained, lost, and regained with a reconcile of its earlier term
// still running.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SHARD_COUNT } from "@quarry/api";
import { createLogger, setupMetrics } from "@quarry/observability";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { bucketOf } from "./bucket-hash.ts";
import { BucketOwnership, type FilteredCache, type KeyedQueue } from "./bucket-ownership.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const COUNT = 4;
const keys = Array.from({ length: 40 }, (_, i) => `ns/req-${i}`);
const inBucket = (b: number) => keys.filter((k) => bucketOf(k, COUNT) === b);

interface Hooks {
  promote(index: number): void;
  demote(index: number): void;
}

function world(shardLabel = false) {
  const events: string[] = [];
  let release: (() => void) | undefined;
  let busy: ((key: string) => boolean) | undefined;
  const queue: KeyedQueue = {
    drop: (match) => {
      events.push(`drop ${keys.filter(match).length}`);
      return 0;
    },
    // a reconcile of `busy` keys runs until release()
    idle: (match) =>
      busy && keys.some((k) => busy?.(k) && match(k))
        ? new Promise<void>((resolve) => {
            release = resolve;
          })
        : Promise.resolve(),
  };
  const cache: FilteredCache = {
    refill: async () => {
      events.push("refill");
    },
    evict: (match) => {
      events.push(`evict ${keys.filter(match).length}`);
      return 0;
    },
    rewatch: () => {
      events.push(`rewatch ${ownership.labelSelector() ?? "(all)"}`);
    },
  };
  const ownership = new BucketOwnership({
    client: new FakeKubeClient(),
    namespace: "sys",
    service: "svc",
    leaderElection: {
      enabled: true,
      buckets: COUNT,
      identity: "a",
      timing: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      shardLabel,
    },
    log,
    meter: setupMetrics("test").meter,
    drainBudgetMs: 60_000,
    caches: () => [{ replay: () => events.push(`replay ${keys.filter((k) => ownership.owns(k)).length}`) }],
    filtered: () => [cache],
    controllers: () => [queue],
  });
  const hooks = ownership as unknown as Hooks;
  return {
    ownership,
    events,
    hooks,
    busyWith: (match: (key: string) => boolean) => {
      busy = match;
    },
    release: () => release?.(),
  };
}

test("a gained bucket is admitted, refilled, then replayed with only its keys owned", async () => {
  const w = world();
  assert.equal(w.ownership.owns(keys[0]!), false, "nothing held, nothing owned");
  w.hooks.promote(1);
  await w.ownership.settled();
  assert.deepEqual(w.events, ["refill", `replay ${inBucket(1).length}`]);
  assert.deepEqual(
    keys.filter((k) => w.ownership.admits(k)),
    inBucket(1),
  );
  w.events.length = 0;
  w.hooks.demote(1);
  assert.deepEqual(w.events, [`drop ${inBucket(1).length}`, `evict ${inBucket(1).length}`]);
  assert.deepEqual(
    keys.filter((k) => w.ownership.admits(k) || w.ownership.owns(k)),
    [],
  );
});

test("a bucket regained while a reconcile of its earlier term runs is admitted only after that reconcile ends", async () => {
  const w = world();
  w.hooks.promote(2);
  await w.ownership.settled();
  const key = inBucket(2)[0]!;
  // a reconcile of `key` is in flight when the bucket is lost (a missed renewal) and regained
  w.busyWith((k) => k === key);
  w.hooks.demote(2);
  w.events.length = 0;
  w.hooks.promote(2);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(w.events, [], "no refill or replay while the earlier reconcile runs");
  assert.equal(w.ownership.owns(key), false);
  assert.equal(w.ownership.admits(key), false);
  w.release();
  await w.ownership.settled();
  assert.deepEqual(w.events, ["refill", `replay ${inBucket(2).length}`]);
  assert.equal(w.ownership.owns(key), true);
});

test("a bucket lost again while its admission waits is never admitted", async () => {
  const w = world();
  const key = inBucket(3)[0]!;
  w.busyWith((k) => k === key);
  w.hooks.promote(3);
  w.hooks.demote(3);
  w.events.length = 0;
  w.release();
  await w.ownership.settled();
  assert.deepEqual(w.events, []);
  assert.equal(w.ownership.admits(key), false);
});

test("with the shard label, the selector names the shards of buckets not admitted; a lost bucket narrows the watch", async () => {
  const w = world(true);
  const excluded = () =>
    w.ownership
      .labelSelector()!
      .replace(/^quarry\.dev\/shard notin \((.*)\)$/, "$1")
      .split(",")
      .map(Number);
  assert.equal(excluded().length, SHARD_COUNT, "nothing admitted: only unlabelled requests");
  w.hooks.promote(1);
  w.hooks.promote(2);
  await w.ownership.settled();
  assert.deepEqual(
    [...new Set(excluded().map((s) => s % COUNT))].sort(),
    [0, 3],
    "the shards of buckets 0 and 3 are excluded, no others",
  );
  assert.equal(excluded().length, SHARD_COUNT / 2);
  w.events.length = 0;
  w.hooks.demote(2);
  assert.equal(w.events.length, 3);
  assert.match(w.events[2]!, /^rewatch quarry\.dev\/shard notin /, "rewatched after the eviction");
  assert.equal(excluded().length, (SHARD_COUNT * 3) / 4);
  assert.equal(world(false).ownership.labelSelector(), undefined, "off: no selector");
});
