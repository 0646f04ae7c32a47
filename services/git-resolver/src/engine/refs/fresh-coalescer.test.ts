import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FreshCoalescer } from "./fresh-coalescer.ts";

/** A lookup whose answer the test decides: each call is one "server state read". */
function controllable() {
  const calls: { resolve(v: string): void; reject(e: Error): void; signal: AbortSignal }[] = [];
  const work = (signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      calls.push({ resolve, reject, signal });
    });
  return { calls, work };
}

const never = () => new AbortController().signal;
const tick = () => new Promise((r) => setImmediate(r));

describe("FreshCoalescer", () => {
  test("callers arriving together share one lookup", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    const all = [c.run("k", never(), work), c.run("k", never(), work), c.run("k", never(), work)];
    await tick();
    assert.equal(calls.length, 1);
    calls[0]?.resolve("c1");
    assert.deepEqual(await Promise.all(all), ["c1", "c1", "c1"]);
    assert.equal(c.started, 1);
    assert.equal(c.size, 0);
  });

  test("freshness: a caller arriving during a lookup never gets that lookup's answer", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    const early = c.run("k", never(), work);
    await tick();
    // the branch moves on the server now; these callers arrive after the lookup started
    const late1 = c.run("k", never(), work);
    const late2 = c.run("k", never(), work);
    assert.equal(calls.length, 1, "the next lookup waits for the running one");
    calls[0]?.resolve("old");
    assert.equal(await early, "old");
    await tick();
    assert.equal(calls.length, 2, "one lookup for everyone who arrived meanwhile");
    calls[1]?.resolve("new");
    assert.deepEqual(await Promise.all([late1, late2]), ["new", "new"]);
    assert.equal(c.started, 2);
  });

  test("different keys never share (credentials, namespaces are part of the key)", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    const a = c.run("url|main|tenant-a", never(), work);
    const b = c.run("url|main|tenant-b", never(), work);
    await tick();
    assert.equal(calls.length, 2);
    calls[0]?.resolve("a");
    calls[1]?.reject(new Error("auth"));
    assert.equal(await a, "a");
    await assert.rejects(b, /auth/);
  });

  test("a failure reaches every caller sharing the lookup, and the next caller starts afresh", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    const both = [c.run("k", never(), work), c.run("k", never(), work)];
    await tick();
    calls[0]?.reject(new Error("unavailable"));
    for (const p of both) await assert.rejects(p, /unavailable/);
    const again = c.run("k", never(), work);
    await tick();
    assert.equal(calls.length, 2);
    calls[1]?.resolve("ok");
    assert.equal(await again, "ok");
  });

  test("a caller that gives up is rejected at once; the lookup goes on while others wait", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    const quitter = new AbortController();
    const q = c.run("k", quitter.signal, work);
    const stays = c.run("k", never(), work);
    await tick();
    assert.equal(calls.length, 1, "both arrived before the lookup started");
    quitter.abort(new Error("timeout"));
    await assert.rejects(q, /timeout/);
    assert.equal(calls[0]?.signal.aborted, false);
    calls[0]?.resolve("v");
    assert.equal(await stays, "v");
  });

  test("when every caller gives up the lookup is aborted, and a queued one never starts", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    const first = new AbortController();
    const second = new AbortController();
    const p1 = c.run("k", first.signal, work);
    await tick();
    const p2 = c.run("k", second.signal, work); // queued behind the first
    second.abort(new Error("gone"));
    await assert.rejects(p2, /gone/);
    first.abort(new Error("gone too"));
    await assert.rejects(p1, /gone too/);
    assert.equal(calls[0]?.signal.aborted, true);
    calls[0]?.reject(new Error("aborted"));
    await tick();
    assert.equal(calls.length, 1, "the queued lookup nobody waits for is not started");
    assert.equal(c.size, 0);
  });

  test("an already aborted caller is refused without starting anything", async () => {
    const c = new FreshCoalescer<string>();
    const { calls, work } = controllable();
    await assert.rejects(c.run("k", AbortSignal.abort(new Error("late")), work), /late/);
    await tick();
    assert.equal(calls.length, 0);
  });

  describe("with a minimum interval between lookups of a key", () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    test("a lone caller is not held back", async () => {
      const c = new FreshCoalescer<string>({ minIntervalMs: 10_000 });
      const { calls, work } = controllable();
      const p = c.run("k", never(), work);
      await tick();
      assert.equal(calls.length, 1);
      calls[0]?.resolve("v");
      assert.equal(await p, "v");
      assert.equal(c.size, 0);
    });

    test("a queued lookup starts one interval after the previous start, still after its callers arrived", async () => {
      const c = new FreshCoalescer<string>({ minIntervalMs: 150 });
      const { calls, work } = controllable();
      const t0 = performance.now();
      const early = c.run("k", never(), work);
      await tick();
      const late = [c.run("k", never(), work), c.run("k", never(), work)];
      calls[0]?.resolve("old");
      assert.equal(await early, "old");
      await sleep(50);
      assert.equal(calls.length, 1, "the next lookup waits for the interval");
      const joined = c.run("k", never(), work); // arrives while the start is held back: shares it
      while (calls.length < 2) await sleep(5);
      assert.ok(performance.now() - t0 >= 145, "no sooner than the interval after the first start");
      calls[1]?.resolve("new");
      assert.deepEqual(await Promise.all([...late, joined]), ["new", "new", "new"]);
      assert.equal(c.started, 2);
      assert.equal(c.size, 0);
    });

    test("the latest caller's interval applies (live config)", async () => {
      const c = new FreshCoalescer<string>({ minIntervalMs: 10_000 });
      const { calls, work } = controllable();
      const first = c.run("k", never(), work, 0);
      await tick();
      const second = c.run("k", never(), work, 0);
      calls[0]?.resolve("a");
      await first;
      await tick();
      assert.equal(calls.length, 2, "interval 0: back to back");
      calls[1]?.resolve("b");
      assert.equal(await second, "b");
    });

    test("a lookup that took longer than the interval is followed at once", async () => {
      const c = new FreshCoalescer<string>({ minIntervalMs: 20 });
      const { calls, work } = controllable();
      const first = c.run("k", never(), work);
      await tick();
      const second = c.run("k", never(), work);
      await sleep(40);
      calls[0]?.resolve("a");
      await first;
      await tick();
      assert.equal(calls.length, 2);
      calls[1]?.resolve("b");
      assert.equal(await second, "b");
    });

    test("when every caller of a held-back lookup gives up it never starts, and nothing leaks", async () => {
      const c = new FreshCoalescer<string>({ minIntervalMs: 60 });
      const { calls, work } = controllable();
      const first = c.run("k", never(), work);
      await tick();
      const quitter = new AbortController();
      const q = c.run("k", quitter.signal, work);
      calls[0]?.resolve("a");
      await first;
      quitter.abort(new Error("gone"));
      await assert.rejects(q, /gone/);
      await sleep(90);
      assert.equal(calls.length, 1);
      assert.equal(c.size, 0);
    });
  });
});
