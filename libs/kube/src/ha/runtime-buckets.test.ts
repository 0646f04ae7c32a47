// Two ServiceRuntimes (two replicas of one service) on one fake apiserver,
// with short real-time leases: every key is reconciled by the replica that
// holds its bucket, a gained bucket's keys are enqueued from the caches, and a
// replica that shuts down hands its keys to the other.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "../client/client.ts";
import { configMaps } from "../client/resources.ts";
import { type RuntimeSettings, ServiceRuntime } from "../runtime.ts";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { bucketOf } from "./bucket-hash.ts";

// ServiceRuntime makes its own logger from LOG_LEVEL
process.env.LOG_LEVEL = process.env.TEST_LOG ?? "silent";
const BUCKETS = 4;
const settings = (identity: string): RuntimeSettings => ({
  systemNamespace: "sys",
  watchNamespace: "app",
  opsPort: 0,
  opsHost: "127.0.0.1",
  concurrency: 2,
  shutdownTimeoutMs: 5_000,
  leaderElection: {
    enabled: true,
    buckets: BUCKETS,
    identity,
    timing: { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 100 },
  },
});

async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function replica(fake: FakeKubeClient, identity: string, bucketed: boolean) {
  const runtime = new ServiceRuntime("svc", settings(identity), fake);
  const reconciled: string[] = [];
  const informer = runtime.informer<KubeObject>(configMaps, { bucketed });
  const controller = runtime.controller("c", {
    reconcile: async (key) => {
      reconciled.push(key);
      return undefined;
    },
  });
  informer.on(controller.handlers());
  return { runtime, reconciled, informer };
}

/** A bucketed cache holds exactly the keys of the buckets its replica leads. */
function assertCachesOwnBuckets(r: ReturnType<typeof replica>, all: readonly string[]): void {
  const held = [0, 1, 2, 3].filter((i) => r.runtime.buckets?.holds(i));
  const cached = r.informer
    .list()
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
    .sort();
  assert.deepEqual(cached, all.filter((k) => held.includes(bucketOf(k, BUCKETS))).sort());
}

const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "app" } });

for (const bucketed of [false, true])
  test(`each key is reconciled by the replica holding its bucket; a replica leaving hands its keys over (${bucketed ? "caches of its buckets only" : "whole caches"})`, async (t) => {
    const fake = new FakeKubeClient();
    fake.seed(configMaps, ...Array.from({ length: 20 }, (_, i) => cm(`early-${i}`)));
    const a = replica(fake, "a", bucketed);
    t.after(() => a.runtime.shutdown());
    await a.runtime.run();
    await until("a to hold every bucket and reconcile every key", () => a.reconciled.length === 20);
    assert.equal(a.runtime.buckets?.status().held.length, BUCKETS);
    assert.deepEqual(a.runtime.readiness().ok, true);

    const b = replica(fake, "b", bucketed);
    t.after(() => b.runtime.shutdown());
    await b.runtime.run();
    await until(
      "two buckets each",
      () => a.runtime.buckets?.status().held.length === 2 && b.runtime.buckets?.status().held.length === 2,
    );
    // b gained two buckets: it reconciled exactly their keys, from its cache
    const bBuckets = [0, 1, 2, 3].filter((i) => b.runtime.buckets?.holds(i));
    const early = Array.from({ length: 20 }, (_, i) => `app/early-${i}`);
    await until("b to reconcile its buckets' keys", () =>
      early.filter((k) => bBuckets.includes(bucketOf(k, BUCKETS))).every((k) => b.reconciled.includes(k)),
    );
    assert.ok(
      b.reconciled.every((k) => bBuckets.includes(bucketOf(k, BUCKETS))),
      b.reconciled.join(","),
    );

    a.reconciled.length = 0;
    b.reconciled.length = 0;
    fake.seed(configMaps, ...Array.from({ length: 40 }, (_, i) => cm(`late-${i}`)));
    const late = Array.from({ length: 40 }, (_, i) => `app/late-${i}`);
    await until("every new key reconciled", () =>
      late.every((k) => [...a.reconciled, ...b.reconciled].includes(k)),
    );
    for (const k of late) {
      const byA = a.reconciled.includes(k);
      const byB = b.reconciled.includes(k);
      assert.ok(byA !== byB, `${k} reconciled by ${byA && byB ? "both" : "neither"}`);
      assert.equal(byB, bBuckets.includes(bucketOf(k, BUCKETS)), k);
    }
    if (bucketed) {
      await Promise.all([a.runtime.bucketsSettled(), b.runtime.bucketsSettled()]);
      for (const r of [a, b]) assertCachesOwnBuckets(r, [...early, ...late]);
    } else assert.equal(b.informer.list().length, 60, "a whole cache holds every key");
    const body = b.runtime.readiness();
    assert.equal(body.ok, true);
    assert.equal(body.info?.buckets.held.length, 2);

    // a leaves: its Leases are released at once and b takes them and their keys
    b.reconciled.length = 0;
    await a.runtime.shutdown();
    await until("b to hold every bucket", () => b.runtime.buckets?.status().held.length === BUCKETS, 3_000);
    await until("b to reconcile a's keys", () =>
      late.filter((k) => !bBuckets.includes(bucketOf(k, BUCKETS))).every((k) => b.reconciled.includes(k)),
    );
    if (bucketed) {
      await b.runtime.bucketsSettled();
      assert.equal(b.informer.list().length, 60, "holding every bucket, it caches every key");
    }
  });
