import assert from "node:assert/strict";
import { test } from "node:test";
import { ResolutionMemo } from "./memo.ts";
import { type Pending, pending, type Resolved } from "./resolver.ts";

const config = { cacheSize: 10, cacheTtlMs: 60_000 };
const cached = { cacheKey: "k", useCache: true };
const bypass = { cacheKey: "k", useCache: false };
const data = (s: string): Resolved => ({ data: new TextEncoder().encode(s) });
const live = () => new AbortController().signal;

test("a miss runs the call and stores it; the next lookup is a hit", async () => {
  const memo = new ResolutionMemo();
  assert.equal(memo.lookup(cached, config), undefined);
  const first = memo.run(cached, config, live(), async () => data("a"));
  assert.equal(first.shared, false);
  const stored = await first.result;
  assert.equal(stored.cached?.operation, "store");
  assert.equal(stored.shared, false);
  const hit = memo.lookup(cached, config);
  assert.equal(hit?.cached?.operation, "retrieve");
  assert.equal(hit?.cached?.storedAt, stored.cached?.storedAt);
  assert.equal(new TextDecoder().decode(hit?.resolved.data), "a");
});

test("a decision that bypasses the cache neither reads nor writes it", async () => {
  const memo = new ResolutionMemo();
  await memo.run(cached, config, live(), async () => data("a")).result;
  assert.equal(memo.lookup(bypass, config), undefined, "bypass never reads");
  const out = await memo.run({ cacheKey: "other", useCache: false }, config, live(), async () => data("b"))
    .result;
  assert.equal(out.cached, undefined);
  assert.equal(memo.lookup({ cacheKey: "other", useCache: true }, config), undefined, "bypass never writes");
});

test("identical calls in flight share one; each caller learns whether it joined", async () => {
  const memo = new ResolutionMemo();
  let calls = 0;
  let release: (r: Resolved) => void = () => {};
  const fn = () => {
    calls++;
    return new Promise<Resolved>((resolve) => {
      release = resolve;
    });
  };
  const a = memo.run(bypass, config, live(), fn);
  const b = memo.run(bypass, config, live(), fn);
  assert.deepEqual([a.shared, b.shared, memo.inFlight], [false, true, 1]);
  release(data("x"));
  const [ra, rb] = await Promise.all([a.result, b.result]);
  assert.equal(calls, 1);
  assert.deepEqual([ra.shared, rb.shared], [false, true]);
  assert.equal(memo.inFlight, 0);
});

test("failures are not stored", async () => {
  const memo = new ResolutionMemo();
  await assert.rejects(
    memo.run(cached, config, live(), async () => {
      throw new Error("unavailable");
    }).result,
    /unavailable/,
  );
  assert.equal(memo.lookup(cached, config), undefined);
});

test("a new cache size or TTL starts an empty cache; an unchanged one keeps entries", async () => {
  const memo = new ResolutionMemo();
  await memo.run(cached, config, live(), async () => data("a")).result;
  assert.ok(memo.lookup(cached, { ...config }));
  assert.equal(memo.lookup(cached, { ...config, cacheTtlMs: 1000 }), undefined);
  await memo.run(cached, { ...config, cacheTtlMs: 1000 }, live(), async () => data("b")).result;
  assert.equal(memo.lookup(cached, { ...config, cacheSize: 5 }), undefined);
});

test("a result finishing after a reconfiguration lands in the new cache", async () => {
  const memo = new ResolutionMemo();
  let release: (r: Resolved) => void = () => {};
  const slow = memo.run(cached, config, live(), () => new Promise<Resolved>((r) => (release = r)));
  const newer = { ...config, cacheSize: 20 };
  assert.equal(memo.lookup({ cacheKey: "other", useCache: true }, newer), undefined); // rebuilds
  release(data("a"));
  await slow.result;
  assert.ok(memo.lookup(cached, newer), "stored where newer lookups read");
});

test("a Pending is handed back to its own caller only, and never stored", async () => {
  const memo = new ResolutionMemo();
  const out = await memo.run(cached, config, live(), async () => pending({ wakeAfterMs: 5 })).result;
  assert.deepEqual(out, { pending: { pending: true, message: undefined, wakeAfterMs: 5 }, shared: false });
  assert.equal(memo.lookup(cached, config), undefined);
});

test("a caller that joined a call ending Pending runs its own step, outside the flight", async () => {
  const memo = new ResolutionMemo();
  let release: (r: Pending) => void = () => {};
  const steps: string[] = [];
  const leader = memo.run(cached, config, live(), () => {
    steps.push("a");
    return new Promise<Pending>((r) => (release = r));
  });
  // b's own step resolves: its answer is b's and stored, though b had joined a's call
  const joiner = memo.run(cached, config, live(), async () => {
    steps.push("b");
    return data("b");
  });
  // c joins too and its own step is still pending: c gets its own Pending, not a's
  const other = memo.run(cached, config, live(), async () => {
    steps.push("c");
    return pending({ message: "c waits" });
  });
  assert.deepEqual([leader.shared, joiner.shared, other.shared], [false, true, true]);
  release(pending({ message: "a waits" }));
  const [ra, rb, rc] = await Promise.all([leader.result, joiner.result, other.result]);
  assert.deepEqual(steps.sort(), ["a", "b", "c"]);
  assert.ok("pending" in ra && ra.pending.message === "a waits");
  assert.ok("resolved" in rb && rb.cached?.operation === "store" && rb.shared === false);
  assert.ok("pending" in rc && rc.pending.message === "c waits");
  assert.equal(new TextDecoder().decode(memo.lookup(cached, config)?.resolved.data), "b");
});

test("a joiner detached before the shared call ended Pending runs nothing", async () => {
  const memo = new ResolutionMemo();
  let release: (r: Pending) => void = () => {};
  memo.run(bypass, config, live(), () => new Promise<Pending>((r) => (release = r)));
  const gone = new AbortController();
  let ran = false;
  const joiner = memo.run(bypass, config, gone.signal, async () => {
    ran = true;
    return data("x");
  });
  gone.abort(new Error("request deleted"));
  release(pending());
  await assert.rejects(joiner.result, /request deleted/);
  assert.equal(ran, false);
});
