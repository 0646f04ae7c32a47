// LeaseView: which copy of a Lease a round works from, the watch's or this
// replica's own newer write; and an elector on a watched cache reads nothing
// from the apiserver once the watch has listed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { FakeClock } from "../testing/fake-clock.ts";
import { LeaseElector, type LeaseTiming } from "./elector.ts";
import { type Lease, LeaseClient, leases } from "./lease.ts";
import { type LeaseCache, LeaseView, WatchedLeases } from "./lease-cache.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const NAME = "svc.00-of-01";
const NS = "quarry-system";

const lease = (rv: string, holder = "a"): Lease => ({
  metadata: { name: NAME, namespace: NS, resourceVersion: rv },
  spec: { holderIdentity: holder },
});

class MapCache implements LeaseCache {
  listed = true;
  readonly items = new Map<string, Lease>();
  synced(): boolean {
    return this.listed;
  }
  get(name: string): Lease | undefined {
    return this.items.get(name);
  }
  list(): Lease[] {
    return [...this.items.values()];
  }
}

const versionRead = (view: LeaseView): string | undefined => {
  const r = view.read();
  return r === "uncached" ? "uncached" : (r.lease?.metadata.resourceVersion ?? "missing");
};

test("LeaseView: which copy each read returns", async (t) => {
  await t.test("a cache that has not listed: the apiserver is read", () => {
    const cache = new MapCache();
    cache.listed = false;
    const view = new LeaseView(cache, NAME);
    assert.equal(versionRead(view), "uncached");
    view.saw(lease("5"));
    assert.equal(versionRead(view), "uncached");
  });
  await t.test("no cache at all: the apiserver is read", () => {
    assert.equal(versionRead(new LeaseView(undefined, NAME)), "uncached");
  });
  await t.test("nothing written: the cache's copy, or missing", () => {
    const cache = new MapCache();
    const view = new LeaseView(cache, NAME);
    assert.equal(versionRead(view), "missing");
    cache.items.set(NAME, lease("3"));
    assert.equal(versionRead(view), "3");
  });
  await t.test("own write ahead of the cache: the write, until the cache shows any other version", () => {
    const cache = new MapCache();
    cache.items.set(NAME, lease("3"));
    const view = new LeaseView(cache, NAME);
    view.saw(lease("4"));
    assert.equal(versionRead(view), "4");
    assert.equal(versionRead(view), "4");
    cache.items.set(NAME, lease("4"));
    assert.equal(versionRead(view), "4");
    cache.items.set(NAME, lease("9", "b"));
    assert.equal(versionRead(view), "9");
  });
  await t.test("a create the cache has not seen: the created copy, not missing", () => {
    const cache = new MapCache();
    const view = new LeaseView(cache, NAME);
    view.saw(lease("1"));
    assert.equal(versionRead(view), "1");
    cache.items.set(NAME, lease("1"));
    assert.equal(versionRead(view), "1");
  });
  await t.test("the watch was quicker than the write's answer: the cache's copy from then on", () => {
    const cache = new MapCache();
    cache.items.set(NAME, lease("4"));
    const view = new LeaseView(cache, NAME);
    view.saw(lease("4"));
    cache.items.set(NAME, lease("7", "b"));
    assert.equal(versionRead(view), "7");
  });
  await t.test("after a conflict: the apiserver once, then what it answered until the cache moves", () => {
    const cache = new MapCache();
    cache.items.set(NAME, lease("3"));
    const view = new LeaseView(cache, NAME);
    view.saw(lease("4"));
    view.forget();
    assert.equal(versionRead(view), "uncached");
    view.saw(lease("6", "b"));
    assert.equal(versionRead(view), "6");
    cache.items.set(NAME, lease("6", "b"));
    assert.equal(versionRead(view), "6");
    cache.items.set(NAME, lease("8", "b"));
    assert.equal(versionRead(view), "8");
  });
  await t.test("deleted behind this replica's back: missing once the cache shows it", () => {
    const cache = new MapCache();
    cache.items.set(NAME, lease("4"));
    const view = new LeaseView(cache, NAME);
    view.saw(lease("5"));
    cache.items.delete(NAME);
    assert.equal(versionRead(view), "missing");
  });
});

test("an elector on a watched cache: renewals only, each under the version it last wrote", async () => {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const fake = new FakeKubeClient({ now: () => clock.now() });
  const watched = new WatchedLeases(fake, NS, "quarry.dev/lease=bucket", log);
  watched.start();
  await watched.waitForSync(5_000);
  assert.ok(watched.synced());
  const timing: LeaseTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
  const elector = new LeaseElector({
    leases: new LeaseClient(fake, NS),
    cache: watched,
    name: NAME,
    identity: "a",
    labels: { "quarry.dev/lease": "bucket" },
    timing,
    log,
    clock,
    random: () => 0,
    hooks: { canAcquire: () => true, gained: () => {}, lost: () => {} },
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  try {
    elector.start();
    for (let round = 0; round < 6; round++) {
      clock.advance(round === 0 ? 0 : timing.retryPeriodMs);
      await settle();
    }
    assert.ok(elector.isLeader());
    const reads = fake.calls.filter((c) => c.resource === leases.plural && c.verb === "get");
    assert.deepEqual(reads, [], "no Lease read from the apiserver");
    const writes = fake.actions.filter((a) => a.resource === leases.plural);
    assert.deepEqual(
      writes.map((a) => a.verb),
      ["create", "update", "update", "update", "update", "update"],
    );
    assert.deepEqual(
      writes.map((a) => a.error),
      writes.map(() => undefined),
      "no renewal conflicted",
    );
  } finally {
    await elector.release();
    await watched.stop();
  }
});
