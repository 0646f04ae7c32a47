// Table tests of the elector's writes (knative style): given this Lease in the
// apiserver, after this long, exactly these creates and updates, and these
// gained/lost events. Time is a FakeClock; the apiserver is FakeKubeClient.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { FakeClock } from "../testing/fake-clock.ts";
import { type AcquireReason, LeaseElector, type LeaseTiming } from "./elector.ts";
import { type Lease, LeaseClient, type LeaseSpec, leases, microTime } from "./lease.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => microTime(T0 + ms);
const NS = "quarry-system";
const NAME = "svc.00-of-01";
const ME = "replica-a";
const PEER = "replica-b";
const TIMING: LeaseTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Harness {
  clock: FakeClock;
  fake: FakeKubeClient;
  elector: LeaseElector;
  events: string[];
  /** Runs every timer due within `ms` from now, letting each round's API calls finish. */
  run(ms: number): Promise<void>;
}

function harness(opts: { given?: LeaseSpec; canAcquire?: (r: AcquireReason) => boolean } = {}): Harness {
  const clock = new FakeClock(T0);
  const fake = new FakeKubeClient({ now: () => clock.now() });
  if (opts.given) fake.seed<Lease>(leases, { metadata: { name: NAME, namespace: NS }, spec: opts.given });
  const events: string[] = [];
  const elector = new LeaseElector({
    leases: new LeaseClient(fake, NS),
    name: NAME,
    identity: ME,
    labels: { "quarry.dev/lease": "bucket" },
    timing: TIMING,
    log,
    clock,
    random: () => 0,
    hooks: {
      canAcquire: opts.canAcquire ?? (() => true),
      gained: () => events.push(`gained@${clock.now() - T0}`),
      lost: () => events.push(`lost@${clock.now() - T0}`),
    },
  });
  const run = async (ms: number) => {
    const target = clock.now() + ms;
    for (;;) {
      await flush();
      const next = clock.nextTimerAt();
      if (next === undefined || next > target) break;
      clock.advance(next - clock.now());
    }
    clock.advance(target - clock.now());
    await flush();
  };
  return { clock, fake, elector, events, run };
}

/** The writes as the apiserver saw them: verb, the resourceVersion they were made under, the spec. */
function writes(fake: FakeKubeClient) {
  return fake.writes().map((a) => {
    const body = a.body as Lease;
    const w: Record<string, unknown> = { verb: a.verb, rv: body.metadata.resourceVersion, spec: body.spec };
    if (a.error !== undefined) w.error = a.error;
    return w;
  });
}

const held = (holder: string, since: number, renewed: number, transitions: number): LeaseSpec => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: at(since),
  renewTime: at(renewed),
  leaseTransitions: transitions,
});

interface Row {
  name: string;
  given?: LeaseSpec;
  canAcquire?: boolean;
  /** How long to run after start. */
  runMs: number;
  want: Record<string, unknown>[];
  wantEvents: string[];
  wantLeader: boolean;
}

const rows: Row[] = [
  {
    name: "no Lease: creates it holding it, first term",
    runMs: 0,
    want: [{ verb: "create", rv: undefined, spec: held(ME, 0, 0, 0) }],
    wantEvents: ["gained@0"],
    wantLeader: true,
  },
  {
    name: "held by a live peer: reads it, writes nothing",
    given: held(PEER, -60_000, -1_000, 4),
    runMs: 14_000,
    want: [],
    wantEvents: [],
    wantLeader: false,
  },
  {
    name: "held by a peer unchanged for the lease duration: taken at the first round after, one more transition",
    given: held(PEER, -60_000, -1_000, 4),
    // seen at 0, expired from 15 s, rounds every 2 s: taken at 16 s
    runMs: 16_000,
    want: [{ verb: "update", rv: "1", spec: held(ME, 16_000, 16_000, 5) }],
    wantEvents: ["gained@16000"],
    wantLeader: true,
  },
  {
    name: "released (no holder): taken at once, one more transition",
    given: { holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 3 },
    runMs: 0,
    want: [{ verb: "update", rv: "1", spec: held(ME, 0, 0, 4) }],
    wantEvents: ["gained@0"],
    wantLeader: true,
  },
  {
    name: "recorded as ours (restarted under the same identity): renewed, acquireTime and transitions kept",
    given: held(ME, -100_000, -3_000, 2),
    runMs: 0,
    want: [{ verb: "update", rv: "1", spec: held(ME, -100_000, 0, 2) }],
    wantEvents: ["gained@0"],
    wantLeader: true,
  },
  {
    name: "free but over this replica's share: left alone",
    canAcquire: false,
    runMs: 10_000,
    want: [],
    wantEvents: [],
    wantLeader: false,
  },
  {
    name: "recorded as ours but not wanted: released at once for a peer",
    given: held(ME, -100_000, -3_000, 2),
    canAcquire: false,
    runMs: 0,
    want: [
      {
        verb: "update",
        rv: "1",
        spec: {
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: at(0),
          renewTime: at(0),
          leaseTransitions: 2,
        },
      },
    ],
    wantEvents: [],
    wantLeader: false,
  },
  {
    name: "leading: renewed every retry period, acquireTime and transitions kept",
    runMs: 4_000,
    want: [
      { verb: "create", rv: undefined, spec: held(ME, 0, 0, 0) },
      { verb: "update", rv: "1", spec: held(ME, 0, 2_000, 0) },
      { verb: "update", rv: "2", spec: held(ME, 0, 4_000, 0) },
    ],
    wantEvents: ["gained@0"],
    wantLeader: true,
  },
];

for (const row of rows) {
  test(row.name, async () => {
    const h = harness({ given: row.given, canAcquire: () => row.canAcquire ?? true });
    h.elector.start();
    await h.run(row.runMs);
    assert.deepEqual(writes(h.fake), row.want);
    assert.deepEqual(h.events, row.wantEvents);
    assert.equal(h.elector.isLeader(), row.wantLeader);
  });
}

test("a lost race (409) when taking a Lease: not leading, and the next round reads the winner", async () => {
  const h = harness({ given: { holderIdentity: "", leaseTransitions: 0 } });
  h.fake.react((call) => {
    if (call.verb !== "update") return undefined;
    // a peer writes first: our update's resourceVersion is stale
    h.fake.seed<Lease>(leases, { metadata: { name: NAME, namespace: NS }, spec: held(PEER, 0, 0, 1) });
    return undefined;
  });
  h.elector.start();
  await h.run(2_000);
  assert.deepEqual(writes(h.fake), [{ verb: "update", rv: "1", spec: held(ME, 0, 0, 1), error: 409 }]);
  assert.deepEqual(h.events, []);
  assert.equal(h.elector.isLeader(), false);
  assert.equal(h.elector.holder(), PEER);
});

test("renewals failing until the renew deadline: stops leading at the deadline, not before", async () => {
  const h = harness();
  h.elector.start();
  await h.run(0);
  h.fake.react((call) => {
    if (call.verb === "update") throw new Error("apiserver unreachable");
    return undefined;
  });
  await h.run(9_999);
  assert.deepEqual(h.events, ["gained@0"]);
  await h.run(1);
  assert.deepEqual(h.events, ["gained@0", "lost@10000"]);
  assert.equal(h.elector.isLeader(), false);
});

test("the Lease taken by another replica: stops leading at the next round, writes nothing", async () => {
  const h = harness();
  h.elector.start();
  await h.run(0);
  h.fake.seed<Lease>(leases, { metadata: { name: NAME, namespace: NS }, spec: held(PEER, 1_000, 1_000, 1) });
  h.fake.clearActions();
  await h.run(2_000);
  assert.deepEqual(writes(h.fake), []);
  assert.deepEqual(h.events, ["gained@0", "lost@2000"]);
});

test("release (graceful shutdown): holderIdentity cleared at once, transitions kept, no more rounds", async () => {
  const h = harness({ given: held(PEER, -60_000, -1_000, 4) });
  h.elector.start();
  await h.run(16_000);
  h.fake.clearActions();
  await h.elector.release();
  assert.deepEqual(writes(h.fake), [
    {
      verb: "update",
      rv: "2",
      spec: {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: at(16_000),
        renewTime: at(16_000),
        leaseTransitions: 5,
      },
    },
  ]);
  assert.deepEqual(h.events, ["gained@16000", "lost@16000"]);
  assert.equal(h.elector.state, "stopped");
  await h.run(10_000);
  assert.equal(h.fake.writes().length, 1);
});

test("release while following: reads the Lease, writes nothing", async () => {
  const h = harness({ given: held(PEER, 0, 0, 1) });
  h.elector.start();
  await h.run(0);
  await h.elector.release();
  assert.deepEqual(writes(h.fake), []);
});

test("hand-over: work stops at once, the Lease is still renewed while draining, then cleared and left to peers", async () => {
  const h = harness();
  h.elector.start();
  await h.run(0);
  let drained: () => void = () => {};
  const handed = h.elector.handOver(() => new Promise<void>((resolve) => (drained = resolve)));
  assert.deepEqual(h.events, ["gained@0", "lost@0"]);
  assert.equal(h.elector.state, "releasing");
  assert.equal(h.elector.holder(), ME, "peers must not take the work before the drain is over");
  await h.run(2_000);
  assert.deepEqual(writes(h.fake).at(-1), { verb: "update", rv: "1", spec: held(ME, 0, 2_000, 0) });
  drained();
  await handed;
  assert.deepEqual(writes(h.fake).at(-1), {
    verb: "update",
    rv: "2",
    spec: {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: at(2_000),
      renewTime: at(2_000),
      leaseTransitions: 0,
    },
  });
  assert.equal(h.elector.state, "following");
  // free, yet not taken back for one lease duration: a peer that needs it gets it
  const before = h.fake.writes().length;
  await h.run(14_000);
  assert.equal(h.fake.writes().length, before);
  await h.run(4_000);
  assert.deepEqual(h.events, ["gained@0", "lost@0", "gained@18000"]);
});

test("a renewal whose answer comes after the deadline does not resume leading by itself", async () => {
  const h = harness();
  h.elector.start();
  await h.run(0);
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const original = h.fake.replace.bind(h.fake);
  h.fake.replace = (async (...args: Parameters<typeof original>) => {
    await gate;
    return original(...args);
  }) as typeof h.fake.replace;
  await h.run(10_000);
  assert.deepEqual(h.events, ["gained@0", "lost@10000"]);
  release();
  await h.run(0);
  assert.equal(h.elector.isLeader(), false, "the late answer was for a renewal, not an acquisition");
  // the Lease is recorded as ours: the next round takes it back as a new term of work
  await h.run(2_000);
  assert.deepEqual(h.events, ["gained@0", "lost@10000", "gained@12000"]);
});

test("a free Lease no replica below its share takes: anyone takes it as unclaimed after 3 retry periods, not before", async () => {
  const asked: AcquireReason[] = [];
  // at its share: refuses a free Lease, takes anything else
  const h = harness({
    given: { holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 3 },
    canAcquire: (r) => {
      asked.push(r);
      return r !== "free";
    },
  });
  h.elector.start();
  // rounds every 2 s from 0: free at 0, 2 and 4 s; unclaimed from 6 s (3 × 2 s)
  await h.run(4_000);
  assert.deepEqual(asked, ["free", "free", "free"]);
  assert.deepEqual(writes(h.fake), []);
  await h.run(2_000);
  assert.deepEqual(asked.at(-1), "unclaimed");
  assert.deepEqual(h.events, ["gained@6000"]);
  assert.equal(h.elector.leadingSince()?.reason, "unclaimed");
});

test("a Lease this replica handed over is not taken back as unclaimed: only once expired", async () => {
  let atShare = false;
  const h = harness({ canAcquire: (r) => !atShare || r !== "free" });
  h.elector.start();
  await h.run(0);
  atShare = true;
  await h.elector.handOver(async () => {});
  assert.equal((await h.fake.get<Lease>(leases, NS, NAME)).spec?.holderIdentity, "");
  // unclaimed from 6 s after the release, yet left to the others until a lease duration passed
  await h.run(14_000);
  assert.deepEqual(h.events, ["gained@0", "lost@0"]);
  await h.run(2_000);
  assert.deepEqual(h.events, ["gained@0", "lost@0", "gained@16000"]);
  assert.equal(h.elector.leadingSince()?.reason, "expired");
});
