import assert from "node:assert/strict";
import { test } from "node:test";
import { cacheKey, ResultCache, SingleFlight, useCache } from "./cache.ts";

test("cacheKey: param order does not matter, namespace and url do", () => {
  const a = cacheKey("git", "ns", { url: "u", revision: "r" }, undefined);
  assert.equal(a, cacheKey("git", "ns", { revision: "r", url: "u" }, undefined));
  assert.notEqual(a, cacheKey("git", "other", { url: "u", revision: "r" }, undefined));
  assert.notEqual(a, cacheKey("bundles", "ns", { url: "u", revision: "r" }, undefined));
  assert.notEqual(a, cacheKey("git", "ns", { url: "u", revision: "r" }, "https://x"));
});

test("useCache modes", () => {
  assert.equal(useCache("always", false), true);
  assert.equal(useCache("never", true), false);
  assert.equal(useCache("auto", true), true);
  assert.equal(useCache("auto", false), false);
});

test("ResultCache evicts least recently used beyond its size", () => {
  const c = new ResultCache({ maxEntries: 2, maxBytes: 1 << 20, ttlMs: 60_000 });
  const r = (s: string) => ({ data: new TextEncoder().encode(s) });
  c.set("a", r("a"));
  c.set("b", r("b"));
  c.get("a");
  c.set("c", r("c"));
  assert.ok(c.get("a"));
  assert.equal(c.get("b"), undefined);
  assert.ok(c.get("c"));
});

test("SingleFlight shares one call between identical requests", async () => {
  const sf = new SingleFlight<number>();
  let calls = 0;
  let release: (v: number) => void = () => {};
  const fn = () => {
    calls++;
    return new Promise<number>((r) => {
      release = r;
    });
  };
  const a = sf.run("k", new AbortController().signal, fn);
  const b = sf.run("k", new AbortController().signal, fn);
  assert.equal(a.shared, false);
  assert.equal(b.shared, true);
  release(42);
  assert.deepEqual(await Promise.all([a.promise, b.promise]), [42, 42]);
  assert.equal(calls, 1);
  assert.equal(sf.inFlight, 0);
});

test("SingleFlight aborts the shared call only when every waiter has gone", async () => {
  const sf = new SingleFlight<number>();
  let inner: AbortSignal | undefined;
  const fn = (s: AbortSignal) => {
    inner = s;
    return new Promise<number>((_r, reject) =>
      s.addEventListener("abort", () => reject(new Error("stopped"))),
    );
  };
  const w1 = new AbortController();
  const w2 = new AbortController();
  const a = sf.run("k", w1.signal, fn);
  const b = sf.run("k", w2.signal, fn);
  w1.abort(new Error("w1 gone"));
  await assert.rejects(a.promise, /w1 gone/);
  assert.equal(inner?.aborted, false, "one waiter left: keep going");
  w2.abort(new Error("w2 gone"));
  await assert.rejects(b.promise, /w2 gone/);
  assert.equal(inner?.aborted, true);
});

test("SingleFlight with an already-aborted signal does not start or join", async () => {
  const sf = new SingleFlight<number>();
  const ac = new AbortController();
  ac.abort(new Error("gone"));
  let calls = 0;
  const r = sf.run("k", ac.signal, async () => {
    calls++;
    return 1;
  });
  await assert.rejects(r.promise, /gone/);
  assert.equal(calls, 0);
});
