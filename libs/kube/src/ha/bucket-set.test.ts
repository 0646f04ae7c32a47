// Several replicas' bucket sets on one fake apiserver and one fake clock:
// how buckets spread, move when a replica dies or leaves, and never have two
// holders at once.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { createLogger } from "@quarry/observability";
import type { KubeClient, KubeObject } from "../client/client.ts";
import { configMaps } from "../client/resources.ts";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { FakeClock } from "../testing/fake-clock.ts";
import { bucketOf, memberLeaseName } from "./bucket-hash.ts";
import { BucketSet, type BucketSetOptions } from "./bucket-set.ts";
import { type LeaseTiming, UNCLAIMED_AFTER_RETRIES } from "./elector.ts";
import { type Lease, leases } from "./lease.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const NS = "quarry-system";
const TIMING: LeaseTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Replica {
  id: string;
  set: BucketSet;
  events: string[];
  /** Cuts it off from the apiserver, as a SIGKILL or a partition does (its timers keep firing). */
  kill(): void;
}

/** Every bucket set a test started: stopped after it, so their Lease watches end with the test. */
const running: BucketSet[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((set) => set.stop()));
});

function fleet(count: number, extra: Partial<BucketSetOptions> = {}) {
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const fake = new FakeKubeClient({ now: () => clock.now() });
  const replicas: Replica[] = [];
  const add = async (id: string): Promise<Replica> => {
    let dead = false;
    // every call fails once dead; nothing else about the shared fake changes
    const client = new Proxy(fake, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (!dead) return value.apply(target, args);
          // a watch is an async iterable, not a promise: its stream fails
          if (prop === "watch")
            return (async function* () {
              yield* [];
              throw new Error(`${id} is dead`);
            })();
          return Promise.reject(new Error(`${id} is dead`));
        };
      },
    }) as KubeClient;
    const events: string[] = [];
    const set = new BucketSet({
      client,
      namespace: NS,
      service: "svc",
      identity: id,
      count,
      timing: TIMING,
      log,
      clock,
      random: () => 0.5,
      onGained: (i) => events.push(`+${i}`),
      onLost: (i) => events.push(`-${i}`),
      drain: async () => {},
      ...extra,
    });
    running.push(set);
    const r: Replica = { id, set, events, kill: () => (dead = true) };
    replicas.push(r);
    const started = set.start();
    await run(0);
    await started;
    return r;
  };
  /** Moves time forward by `ms`, a timer at a time, letting each round's API calls finish. */
  const run = async (ms: number) => {
    const target = clock.now() + ms;
    for (;;) {
      await flush();
      const next = clock.nextTimerAt();
      if (next === undefined || next > target) break;
      clock.advance(next - clock.now());
      // no instant may have two replicas leading one bucket
      assertOneHolderEach(replicas, count);
    }
    clock.advance(target - clock.now());
    await flush();
  };
  const holders = () =>
    Array.from({ length: count }, (_, i) => replicas.filter((r) => r.set.holds(i)).map((r) => r.id));
  return { clock, fake, add, run, holders, replicas };
}

function assertOneHolderEach(replicas: Replica[], count: number): void {
  for (let i = 0; i < count; i++) {
    const leading = replicas.filter((r) => r.set.holds(i)).map((r) => r.id);
    assert.ok(leading.length <= 1, `bucket ${i} led by ${leading.join(" and ")}`);
  }
}

const heldCounts = (replicas: Replica[]) => replicas.map((r) => r.set.status().held.length);

test("one replica alone takes every bucket", async () => {
  const f = fleet(4);
  const a = await f.add("a");
  await f.run(0);
  assert.deepEqual(f.holders(), [["a"], ["a"], ["a"], ["a"]]);
  assert.deepEqual(a.set.status(), {
    identity: "a",
    total: 4,
    held: ["svc.00-of-04", "svc.01-of-04", "svc.02-of-04", "svc.03-of-04"],
    members: 1,
    competing: true,
  });
});

test("replicas started one after another share the buckets evenly; each key is owned by exactly one", async () => {
  const f = fleet(6);
  await f.add("a");
  await f.run(4_000);
  await f.add("b");
  await f.run(6_000);
  await f.add("c");
  await f.run(8_000);
  assert.deepEqual(heldCounts(f.replicas), [2, 2, 2]);
  for (const holders of f.holders()) assert.equal(holders.length, 1);
  for (let k = 0; k < 100; k++) {
    const owners = f.replicas.filter((r) => r.set.owns(`ns/req-${k}`));
    assert.equal(owners.length, 1, `ns/req-${k}`);
    assert.ok(owners[0]!.set.holds(bucketOf(`ns/req-${k}`, 6)));
  }
  assert.ok(f.replicas.every((r) => r.set.status().members === 3));
});

test("4 buckets over 3 replicas: nobody is left with none (2+1+1)", async () => {
  const f = fleet(4);
  await f.add("a");
  await f.run(4_000);
  await f.add("b");
  await f.run(6_000);
  await f.add("c");
  await f.run(20_000);
  assert.deepEqual(
    heldCounts(f.replicas).sort((x, y) => x - y),
    [1, 1, 2],
  );
});

test("a dead replica's buckets move to the others once its Leases expire, and its member Lease is removed", async () => {
  const f = fleet(6);
  await f.add("a");
  await f.add("b");
  const c = await f.add("c");
  await f.run(20_000);
  const its = f.holders().flatMap((h, i) => (h[0] === "c" ? [i] : []));
  assert.equal(its.length, 2);
  c.kill();
  const killedAt = f.clock.now();

  // not before the lease duration: the others cannot tell a dead holder from a slow one
  await f.run(TIMING.leaseDurationMs - TIMING.retryPeriodMs);
  for (const i of its) assert.ok(!f.replicas[0]!.set.holds(i) && !f.replicas[1]!.set.holds(i));
  // within a lease duration and two (jittered) retry periods: one to see its last renewal, one to act
  await f.run(2 * 1.2 * TIMING.retryPeriodMs + TIMING.retryPeriodMs);
  assert.equal(f.clock.now() - killedAt, TIMING.leaseDurationMs + 2 * 1.2 * TIMING.retryPeriodMs);
  for (const i of its) assert.equal(f.holders()[i]!.filter((id) => id !== "c").length, 1, `bucket ${i}`);
  assert.deepEqual(
    c.events.slice(-2).sort(),
    its.map((i) => `-${i}`).sort(),
    "the dead one stopped owning them too",
  );
  // balance comes back once the dead one's member Lease is gone and the takeover settled
  await f.run(TIMING.leaseDurationMs);
  assert.deepEqual(heldCounts(f.replicas.slice(0, 2)), [3, 3]);
  const members = f.fake.list<Lease>(leases, NS, { labelSelector: "quarry.dev/lease=member" });
  assert.equal((await members).items.length, 2);
});

test("a replica that stops gracefully releases its Leases: the others take them at their next round", async () => {
  const f = fleet(6);
  await f.add("a");
  await f.add("b");
  const c = await f.add("c");
  await f.run(20_000);
  const its = f.holders().flatMap((h, i) => (h[0] === "c" ? [i] : []));
  await c.set.stop();
  const lease = await f.fake.get<Lease>(leases, NS, `svc.0${its[0]}-of-06`);
  assert.equal(lease.spec?.holderIdentity, "");
  await f.run(TIMING.retryPeriodMs * 1.2);
  for (const i of its) assert.equal(f.holders()[i]!.filter((id) => id !== "c").length, 1, `bucket ${i}`);
  const members = await f.fake.list<Lease>(leases, NS, { labelSelector: "quarry.dev/lease=member" });
  assert.deepEqual(members.items.map((l) => l.spec?.holderIdentity).sort(), ["a", "b"]);
});

test("a hand-over waits for the bucket's work in flight before releasing the Lease", async () => {
  const clock = new FakeClock(0);
  const fake = new FakeKubeClient({ now: () => clock.now() });
  let finish: () => void = () => {};
  const drained: number[] = [];
  const make = (id: string, drain: (i: number) => Promise<void>) => {
    const set = new BucketSet({
      client: fake,
      namespace: NS,
      service: "svc",
      identity: id,
      count: 2,
      timing: TIMING,
      log,
      clock,
      random: () => 0,
      onGained: () => {},
      onLost: () => {},
      drain,
    });
    running.push(set);
    return set;
  };
  const a = make("a", (i) => {
    drained.push(i);
    return new Promise<void>((resolve) => (finish = resolve));
  });
  const startA = a.start();
  clock.advance(0);
  await flush();
  await startA;
  clock.advance(0);
  await flush();
  assert.equal(a.status().held.length, 2);
  const b = make("b", async () => {});
  const startB = b.start();
  await flush();
  await startB;
  // a's next membership round sees b and hands one bucket over, waiting for its work
  clock.advance(TIMING.retryPeriodMs);
  await flush();
  assert.deepEqual(drained, [1]);
  assert.equal(a.status().held.length, 1);
  const held = await fake.get<Lease>(leases, NS, "svc.01-of-02");
  assert.equal(held.spec?.holderIdentity, "a", "still a's while its work drains");
  finish();
  await flush();
  clock.advance(TIMING.retryPeriodMs * 1.2);
  await flush();
  assert.deepEqual(b.status().held, ["svc.01-of-02"]);
});

test("with an owner ConfigMap, every Lease it creates is owned by it (helm uninstall collects them)", async () => {
  const f = fleet(2, { ownerConfigMap: "svc-config" });
  f.fake.seed(configMaps, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "svc-config", namespace: NS },
  });
  const uid = (await f.fake.get<KubeObject>(configMaps, NS, "svc-config")).metadata.uid;
  assert.ok(uid);
  await f.add("a");
  await f.run(0);
  const all = (await f.fake.list<Lease>(leases, NS)).items;
  assert.deepEqual(
    all.map((l) => l.metadata.name).sort(),
    ["svc.00-of-02", "svc.01-of-02", memberLeaseName("svc", "a")].sort(),
  );
  for (const l of all)
    assert.deepEqual(l.metadata.ownerReferences, [
      { apiVersion: "v1", kind: "ConfigMap", name: "svc-config", uid },
    ]);
});

test("without the owner ConfigMap the Leases are created all the same, unowned", async () => {
  const f = fleet(1, { ownerConfigMap: "missing-config" });
  const a = await f.add("a");
  await f.run(0);
  assert.deepEqual(a.set.status().held, ["svc.00-of-01"]);
  for (const l of (await f.fake.list<Lease>(leases, NS)).items)
    assert.equal(l.metadata.ownerReferences, undefined);
});

test("a rolling update's step (a replica joins, an old one stops): no bucket waits for a Lease to expire", async () => {
  const f = fleet(6);
  await f.add("a");
  await f.add("b");
  await f.add("c");
  await f.run(20_000);
  assert.deepEqual(heldCounts(f.replicas), [2, 2, 2]);
  // the surge replica joins: peers count 4 and hand one bucket over to it
  await f.add("d");
  await f.run(TIMING.retryPeriodMs);
  // then the old one is SIGTERMed while peers may still count it: its buckets are released
  await f.replicas[0]!.set.stop();
  const stoppedAt = f.clock.now();
  let allHeldAt: number | undefined;
  for (let t = 0; t < TIMING.leaseDurationMs && allHeldAt === undefined; t += 250) {
    await f.run(250);
    if (f.holders().every((h) => h.filter((id) => id !== "a").length === 1)) allHeldAt = f.clock.now();
  }
  assert.ok(allHeldAt !== undefined, "a bucket stayed unheld for a lease duration");
  const bound = (UNCLAIMED_AFTER_RETRIES + 2) * TIMING.retryPeriodMs;
  assert.ok(
    allHeldAt - stoppedAt <= bound,
    `every bucket held again after ${allHeldAt - stoppedAt} ms (> ${bound})`,
  );
});
