import assert from "node:assert/strict";
import { test } from "node:test";
import { ResolutionMemo } from "./memo.ts";
import type { Resolved } from "./resolver.ts";

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

test("a plan that bypasses the cache neither reads nor writes it", async () => {
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
