import assert from "node:assert/strict";
import { test } from "node:test";
import { leaderElectionFromEnv } from "./leader-settings.ts";

test("off by default: one bucket, client-go's timings, a unique identity per process", () => {
  const a = leaderElectionFromEnv({});
  const b = leaderElectionFromEnv({});
  assert.equal(a.enabled, false);
  assert.equal(a.buckets, 1);
  assert.deepEqual(a.timing, { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
  assert.notEqual(a.identity, b.identity);
});

test("on with more than one bucket, or when asked; off when asked, whatever the buckets", () => {
  assert.equal(leaderElectionFromEnv({ QUARRY_BUCKETS: "3" }).enabled, true);
  assert.equal(leaderElectionFromEnv({ QUARRY_LEADER_ELECTION: "on" }).enabled, true);
  assert.equal(leaderElectionFromEnv({ QUARRY_LEADER_ELECTION: "true", QUARRY_BUCKETS: "1" }).enabled, true);
  assert.equal(leaderElectionFromEnv({ QUARRY_LEADER_ELECTION: "off", QUARRY_BUCKETS: "4" }).enabled, false);
});

test("identity from POD_NAME; timings as Go durations", () => {
  const s = leaderElectionFromEnv({
    POD_NAME: "cluster-resolver-7d9f-x2",
    QUARRY_BUCKETS: "6",
    QUARRY_LEASE_DURATION: "3s",
    QUARRY_LEASE_RENEW_DEADLINE: "2s",
    QUARRY_LEASE_RETRY_PERIOD: "250ms",
  });
  assert.deepEqual(s, {
    enabled: true,
    buckets: 6,
    identity: "cluster-resolver-7d9f-x2",
    timing: { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 },
  });
});

test("invalid values fail at start, naming the variable", () => {
  assert.throws(() => leaderElectionFromEnv({ QUARRY_BUCKETS: "0" }), /QUARRY_BUCKETS/);
  assert.throws(() => leaderElectionFromEnv({ QUARRY_BUCKETS: "65" }), /1 to 64/);
  assert.throws(() => leaderElectionFromEnv({ QUARRY_BUCKETS: "2.5" }), /QUARRY_BUCKETS/);
  assert.throws(() => leaderElectionFromEnv({ QUARRY_LEADER_ELECTION: "maybe" }), /QUARRY_LEADER_ELECTION/);
  assert.throws(
    () => leaderElectionFromEnv({ QUARRY_BUCKETS: "2", QUARRY_LEASE_DURATION: "soon" }),
    /QUARRY_LEASE_DURATION/,
  );
  assert.throws(
    () =>
      leaderElectionFromEnv({
        QUARRY_BUCKETS: "2",
        QUARRY_LEASE_DURATION: "5s",
        QUARRY_LEASE_RENEW_DEADLINE: "5s",
      }),
    /lease duration must be longer than the renew deadline/,
  );
  assert.throws(
    () => leaderElectionFromEnv({ QUARRY_BUCKETS: "2", QUARRY_LEASE_RETRY_PERIOD: "10s" }),
    /renew deadline must be longer than the retry period/,
  );
});
