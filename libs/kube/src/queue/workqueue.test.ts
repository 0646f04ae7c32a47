import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "../testing/fake-clock.ts";
import { ExponentialBackoff } from "../time/backoff.ts";
import { runWorkers, WorkQueue } from "./workqueue.ts";

// One macrotask turn: lets every pending promise continuation (woken workers) run.
// Not a sleep: all timing in these tests comes from FakeClock.
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function newQueue(onDepth?: (depth: number) => void): { q: WorkQueue; clock: FakeClock } {
  const clock = new FakeClock();
  const backoff = new ExponentialBackoff({ maxMs: 1000, random: () => 0 });
  return { q: new WorkQueue({ clock, backoff, ...(onDepth ? { onDepth } : {}) }), clock };
}

async function drainKeys(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.depth() > 0) {
    const key = await q.get();
    assert.ok(key !== undefined);
    out.push(key);
    q.done(key);
  }
  return out;
}

describe("WorkQueue", () => {
  it("dedupes keys that are already queued and serves FIFO", async () => {
    const { q } = newQueue();
    q.add("a");
    q.add("b");
    q.add("a");
    q.add("c");
    q.add("b");
    assert.equal(q.depth(), 3);
    assert.deepEqual(await drainKeys(q), ["a", "b", "c"]);
  });

  it("re-queues a key added during processing exactly once after done", async () => {
    const { q } = newQueue();
    q.add("a");
    const key = await q.get();
    assert.equal(key, "a");
    q.add("a");
    q.add("a");
    q.addSlow("a");
    assert.equal(q.depth(), 0, "a key being processed is not queued again");
    assert.equal(q.processingCount(), 1);
    q.done("a");
    assert.equal(q.depth(), 1);
    assert.equal(await q.get(), "a");
    q.done("a");
    assert.equal(q.depth(), 0);
    assert.equal(q.processingCount(), 0);
    q.done("a"); // unknown/duplicate done is ignored
    assert.equal(q.depth(), 0);
  });

  it("never hands a processing key to a waiting worker", async () => {
    const { q } = newQueue();
    q.add("a");
    assert.equal(await q.get(), "a");
    const second = q.get();
    q.add("a");
    let got: string | undefined;
    void second.then((k) => {
      got = k;
    });
    await flush();
    assert.equal(got, undefined, "second worker must not receive a while it is processing");
    q.done("a");
    await flush();
    assert.equal(got, "a");
  });

  it("serves the fast lane before the slow lane", async () => {
    const { q } = newQueue();
    q.addSlow("s1");
    q.addSlow("s2");
    q.add("f1");
    q.addSlow("s3");
    q.add("f2");
    assert.equal(q.depth(), 5);
    assert.equal(await q.get(), "f1");
    q.add("f3"); // a fresh event arriving mid-resync still jumps ahead of the slow lane
    assert.deepEqual(await drainKeys(q), ["f2", "f3", "s1", "s2", "s3"]);
  });

  it("promotes a slow-lane key to the fast lane, and never demotes", async () => {
    const { q } = newQueue();
    q.addSlow("a");
    q.addSlow("b");
    q.addSlow("c");
    q.add("b");
    assert.equal(q.depth(), 3);
    q.add("x");
    q.addSlow("x"); // already in the fast lane: stays there
    assert.equal(q.depth(), 4);
    assert.deepEqual(await drainKeys(q), ["b", "x", "a", "c"]);
  });

  it("re-queues a dirty key in the lane it was added with, fast winning over slow", async () => {
    const { q } = newQueue();
    q.add("a");
    q.add("b");
    assert.equal(await q.get(), "a");
    assert.equal(await q.get(), "b");
    q.addSlow("a");
    q.addSlow("b");
    q.add("b");
    q.done("a");
    q.done("b");
    q.add("c");
    assert.deepEqual(await drainKeys(q), ["b", "c", "a"]);
  });

  it("get waits for an add and releases waiters FIFO", async () => {
    const { q } = newQueue();
    const w1 = q.get();
    const w2 = q.get();
    q.add("a");
    q.add("b");
    assert.equal(await w1, "a");
    assert.equal(await w2, "b");
    assert.equal(q.processingCount(), 2);
  });

  it("addAfter fires at the right fake time and keeps the earliest deadline", () => {
    const { q, clock } = newQueue();
    q.addAfter("a", 100);
    q.addAfter("a", 50);
    q.addAfter("a", 200);
    assert.equal(q.delayedCount(), 1);
    assert.equal(clock.pendingTimers(), 1, "the replaced later timer was cancelled");
    clock.advance(49);
    assert.equal(q.depth(), 0);
    clock.advance(1);
    assert.equal(q.depth(), 1);
    assert.equal(q.delayedCount(), 0);
    clock.advance(1000);
    assert.equal(q.depth(), 1, "no extra add from superseded deadlines");
  });

  it("addAfter into the slow lane: served only once the fast lane is empty", async () => {
    const { q, clock } = newQueue();
    q.addAfter("cleanup", 10, "slow");
    clock.advance(10);
    q.add("fresh");
    assert.equal(await q.get(), "fresh");
    assert.equal(await q.get(), "cleanup");
  });

  it("addAfter with ms <= 0 adds now, and delayed adds dedupe with queued keys", () => {
    const { q, clock } = newQueue();
    q.addAfter("a", 0);
    q.addAfter("b", -5);
    assert.equal(q.depth(), 2);
    assert.equal(clock.pendingTimers(), 0);
    q.addAfter("a", 10);
    clock.advance(10);
    assert.equal(q.depth(), 2);
  });

  it("addRateLimited follows the backoff sequence and forget resets it", async () => {
    const { q, clock } = newQueue();
    const fireTimes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const start = clock.now();
      q.addRateLimited("k");
      while (q.depth() === 0) clock.advance(1);
      fireTimes.push(clock.now() - start);
      assert.equal(await q.get(), "k");
      q.done("k");
    }
    assert.deepEqual(fireTimes, [50, 100, 200, 400, 800, 1000]);
    assert.equal(q.numRequeues("k"), 6);
    q.forget("k");
    assert.equal(q.numRequeues("k"), 0);
    q.addRateLimited("k");
    clock.advance(49);
    assert.equal(q.depth(), 0);
    clock.advance(1);
    assert.equal(q.depth(), 1);
  });

  it("addRateLimited waits for a source's Retry-After when it is longer than the backoff", () => {
    const { q, clock } = newQueue();
    q.addRateLimited("k", 300);
    clock.advance(299);
    assert.equal(q.depth(), 0, "backoff alone would have fired at 50");
    clock.advance(1);
    assert.equal(q.depth(), 1);
    assert.equal(q.numRequeues("k"), 1, "still counts as a failure");
  });

  it("addRateLimited with the caller's own delay replaces the backoff but still counts the failure", () => {
    const { q, clock } = newQueue();
    q.addRateLimited("k", 0, 10);
    clock.advance(10);
    assert.equal(q.depth(), 1, "the backoff alone would have waited 50");
    assert.equal(q.numRequeues("k"), 1);
    const { q: q2, clock: clock2 } = newQueue();
    q2.addRateLimited("k", 300, 10);
    clock2.advance(299);
    assert.equal(q2.depth(), 0, "a longer Retry-After still wins");
    clock2.advance(1);
    assert.equal(q2.depth(), 1);
  });

  it("a delayed add firing while the key is processing marks it dirty", async () => {
    const { q, clock } = newQueue();
    q.add("a");
    assert.equal(await q.get(), "a");
    q.addAfter("a", 10);
    clock.advance(10);
    assert.equal(q.depth(), 0);
    q.done("a");
    assert.equal(q.depth(), 1);
  });

  it("shutDown releases waiters, cancels timers, drops queued keys and ignores later adds", async () => {
    const { q, clock } = newQueue();
    const w1 = q.get();
    const w2 = q.get();
    q.addAfter("a", 100);
    q.addRateLimited("b");
    assert.equal(clock.pendingTimers(), 2);
    q.shutDown();
    assert.equal(await w1, undefined);
    assert.equal(await w2, undefined);
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(q.delayedCount(), 0);
    clock.advance(10_000);
    q.add("c");
    q.addSlow("d");
    q.addAfter("e", 5);
    q.addRateLimited("f");
    assert.equal(q.depth(), 0);
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(await q.get(), undefined);
    assert.equal(q.isShuttingDown(), true);
    q.shutDown(); // idempotent

    const other = newQueue();
    other.q.add("x");
    other.q.addSlow("y");
    other.q.shutDown();
    assert.equal(other.q.depth(), 0);
    assert.equal(await other.q.get(), undefined);
  });

  it("drained waits for in-flight keys and drops their dirty re-adds after shutDown", async () => {
    const { q } = newQueue();
    assert.equal(
      await Promise.race([q.drained().then(() => "drained"), flush().then(() => "pending")]),
      "drained",
    );
    q.add("a");
    q.add("b");
    assert.equal(await q.get(), "a");
    assert.equal(await q.get(), "b");
    q.add("a"); // dirty
    let drained = false;
    void q.drained().then(() => {
      drained = true;
    });
    q.shutDown();
    await flush();
    assert.equal(drained, false);
    q.done("a");
    await flush();
    assert.equal(drained, false);
    assert.equal(q.depth(), 0, "dirty key is not re-queued after shutDown");
    q.done("b");
    await flush();
    assert.equal(drained, true);
  });

  it("reports depth changes through onDepth, once per operation", async () => {
    const seen: number[] = [];
    const { q, clock } = newQueue((d) => seen.push(d));
    q.add("a"); // 1
    q.add("b"); // 2
    q.add("a"); // dup: no report
    q.addSlow("c"); // 3
    q.add("c"); // promotion: no report
    assert.equal(await q.get(), "a"); // 2
    q.add("a"); // dirty: no report
    q.done("a"); // re-queued: 3
    q.addAfter("d", 10); // delayed: no report
    clock.advance(10); // 4
    q.shutDown(); // 0
    assert.deepEqual(seen, [1, 2, 3, 2, 3, 4, 0]);

    const seen2: number[] = [];
    const other = newQueue((d) => seen2.push(d));
    const waiter = other.q.get();
    other.q.add("x"); // handed straight to the waiter: depth never observably changes
    assert.equal(await waiter, "x");
    assert.deepEqual(seen2, []);
  });
});

describe("runWorkers", () => {
  it("never runs one key on two workers at once, with concurrency 4, and loses no update", async () => {
    const { q, clock } = newQueue();
    const active = new Map<string, number>();
    let maxPerKey = 0;
    let running = 0;
    let maxRunning = 0;
    const lastAdd = new Map<string, number>();
    const lastStart = new Map<string, number>();
    let runs = 0;

    const workers = runWorkers(q, 4, async (key) => {
      const n = (active.get(key) ?? 0) + 1;
      active.set(key, n);
      maxPerKey = Math.max(maxPerKey, n);
      running++;
      maxRunning = Math.max(maxRunning, running);
      lastStart.set(key, clock.now());
      runs++;
      // Handlers take different fake times so completions interleave with adds.
      await new Promise<void>((resolve) => clock.setTimer(5 + (key.charCodeAt(0) % 4) * 3, resolve));
      active.set(key, n - 1);
      running--;
    });

    const keys = ["a", "b", "c", "d", "e", "f"];
    for (let round = 0; round < 40; round++) {
      // Deterministic bursty pattern: several adds per round, repeated keys, both lanes.
      for (let j = 0; j < 5; j++) {
        const key = keys[(round * 7 + j * 3) % keys.length]!;
        if ((round + j) % 3 === 0) q.addSlow(key);
        else q.add(key);
        lastAdd.set(key, clock.now());
      }
      await flush();
      clock.advance(4);
      await flush();
    }
    // Let everything settle.
    while (q.depth() > 0 || q.processingCount() > 0) {
      clock.advance(1);
      await flush();
    }

    assert.equal(maxPerKey, 1);
    assert.equal(maxRunning, 4, "workers actually ran concurrently, bounded by 4");
    assert.ok(runs < 40 * 5, `adds were coalesced (${runs} runs)`);
    for (const [key, added] of lastAdd) {
      const started = lastStart.get(key);
      assert.ok(started !== undefined && started >= added, `last add of ${key} at ${added} was processed`);
    }

    q.shutDown();
    await workers;
    assert.equal(q.processingCount(), 0);
  });

  it("resolves only after in-flight handlers finish following shutDown", async () => {
    const { q, clock } = newQueue();
    let finished = 0;
    const workers = runWorkers(q, 2, async () => {
      await new Promise<void>((resolve) => clock.setTimer(100, resolve));
      finished++;
    });
    let exited = false;
    void workers.then(() => {
      exited = true;
    });
    q.add("a");
    q.add("b");
    q.add("c");
    await flush();
    assert.equal(q.processingCount(), 2);
    q.shutDown();
    await flush();
    assert.equal(exited, false);
    clock.advance(100);
    await flush();
    assert.equal(exited, true);
    assert.equal(finished, 2, "queued c was dropped, in-flight a and b finished");
    assert.equal(q.processingCount(), 0);
  });

  it("calls done when the handler throws and re-queues the key with backoff", async () => {
    const { q, clock } = newQueue();
    const errors: Array<[string, unknown]> = [];
    let attempts = 0;
    const workers = runWorkers(
      q,
      1,
      (key) => {
        attempts++;
        if (attempts <= 2) throw new Error(`boom ${attempts}`);
        q.forget(key);
      },
      { onError: (key, error) => errors.push([key, error]) },
    );
    q.add("k");
    await flush();
    assert.equal(attempts, 1);
    assert.equal(q.processingCount(), 0, "done was called despite the throw");
    assert.equal(q.delayedCount(), 1);
    clock.advance(49);
    await flush();
    assert.equal(attempts, 1);
    clock.advance(1);
    await flush();
    assert.equal(attempts, 2);
    clock.advance(100);
    await flush();
    assert.equal(attempts, 3);
    assert.equal(q.numRequeues("k"), 0);
    assert.deepEqual(
      errors.map(([k, e]) => [k, (e as Error).message]),
      [
        ["k", "boom 1"],
        ["k", "boom 2"],
      ],
    );
    q.shutDown();
    await workers;
  });

  it("survives a throwing onError and rejects bad concurrency", async () => {
    const { q } = newQueue();
    let calls = 0;
    const workers = runWorkers(
      q,
      1,
      () => {
        calls++;
        throw new Error("x");
      },
      {
        onError: () => {
          throw new Error("reporter broke");
        },
      },
    );
    q.add("a");
    await flush();
    q.add("b");
    await flush();
    assert.equal(calls, 2);
    q.shutDown();
    await workers;
    await assert.rejects(
      runWorkers(q, 0, () => {}),
      RangeError,
    );
    await assert.rejects(
      runWorkers(q, 1.5, () => {}),
      RangeError,
    );
  });
});

describe("WorkQueue.removeWhere and idle (a lost bucket)", () => {
  it("drops matching keys from both lanes, delayed adds, re-add marks and backoff; others stay", async () => {
    const { q, clock } = newQueue();
    q.add("lost/a");
    q.addSlow("lost/b");
    q.add("kept/c");
    q.addAfter("lost/d", 1000);
    q.addRateLimited("lost/e");
    const busy = await q.get(); // "lost/a" is being processed
    assert.equal(busy, "lost/a");
    q.add("lost/a"); // marked to run again after done
    assert.equal(q.numRequeues("lost/e"), 1);

    assert.equal(
      q.removeWhere((k) => k.startsWith("lost/")),
      4,
    );
    assert.equal(q.numRequeues("lost/e"), 0);
    assert.equal(q.delayedCount(), 0);
    q.done("lost/a");
    clock.advance(10_000);
    assert.deepEqual(await drainKeys(q), ["kept/c"]);
  });

  it("idle resolves once no matching key is in flight, at once when none is", async () => {
    const { q } = newQueue();
    q.add("lost/a");
    q.add("kept/b");
    const a = await q.get();
    const b = await q.get();
    let idle = false;
    void q.idle((k) => k.startsWith("lost/")).then(() => (idle = true));
    q.done(b!);
    await flush();
    assert.equal(idle, false, "still reconciling lost/a");
    q.done(a!);
    await flush();
    assert.equal(idle, true);
    await q.idle(() => true);
  });
});
