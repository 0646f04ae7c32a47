import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BlobBatcher } from "./blob-batcher.ts";

function recorder() {
  const runs: { items: string[]; signal: AbortSignal; done(): void; fail(e: Error): void }[] = [];
  const run = (items: string[], signal: AbortSignal) =>
    new Promise<void>((done, fail) => {
      runs.push({ items: [...items].sort(), signal, done, fail });
    });
  return { runs, run };
}

const never = () => new AbortController().signal;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("BlobBatcher", () => {
  test("blobs asked for within the window go in one batch", async () => {
    const b = new BlobBatcher({ windowMs: 5 });
    const { runs, run } = recorder();
    const all = ["a", "b", "c", "a"].map((oid) => b.add("repo", oid, never(), run));
    await sleep(20);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0]?.items, ["a", "b", "c"]);
    runs[0]?.done();
    await Promise.all(all);
    assert.equal(b.batches, 1);
    assert.equal(b.size, 0);
  });

  test("while a batch runs: a blob it holds joins it, others gather in one next batch", async () => {
    const b = new BlobBatcher({ windowMs: 1 });
    const { runs, run } = recorder();
    const first = b.add("repo", "a", never(), run);
    await sleep(10);
    assert.equal(runs.length, 1);
    let joinedDone = false;
    const joined = b.add("repo", "a", never(), run).then(() => {
      joinedDone = true;
    });
    const later = [b.add("repo", "x", never(), run), b.add("repo", "y", never(), run)];
    await sleep(10);
    assert.equal(runs.length, 1, "one batch per repository at a time");
    runs[0]?.done();
    await first;
    await joined;
    assert.equal(joinedDone, true);
    await sleep(1);
    assert.equal(runs.length, 2);
    assert.deepEqual(runs[1]?.items, ["x", "y"]);
    runs[1]?.done();
    await Promise.all(later);
  });

  test("keys are independent; a failure reaches everyone in the batch", async () => {
    const b = new BlobBatcher({ windowMs: 1 });
    const { runs, run } = recorder();
    const one = b.add("repo-1", "a", never(), run);
    const two = [b.add("repo-2", "a", never(), run), b.add("repo-2", "b", never(), run)];
    await sleep(10);
    assert.equal(runs.length, 2);
    runs[0]?.done();
    runs[1]?.fail(new Error("unavailable"));
    await one;
    for (const p of two) await assert.rejects(p, /unavailable/);
  });

  test("a batch is aborted only when everyone waiting for it gave up", async () => {
    const b = new BlobBatcher({ windowMs: 1 });
    const { runs, run } = recorder();
    const c1 = new AbortController();
    const c2 = new AbortController();
    const p1 = b.add("repo", "a", c1.signal, run);
    const p2 = b.add("repo", "b", c2.signal, run);
    await sleep(10);
    c1.abort(new Error("first gone"));
    await assert.rejects(p1, /first gone/);
    assert.equal(runs[0]?.signal.aborted, false);
    c2.abort(new Error("second gone"));
    await assert.rejects(p2, /second gone/);
    assert.equal(runs[0]?.signal.aborted, true);
    runs[0]?.fail(new Error("killed"));
    await sleep(5);
    assert.equal(b.size, 0);
  });

  test("a batch nobody waits for any more never starts", async () => {
    const b = new BlobBatcher({ windowMs: 5 });
    const { runs, run } = recorder();
    const c = new AbortController();
    const p = b.add("repo", "a", c.signal, run);
    c.abort(new Error("gone"));
    await assert.rejects(p, /gone/);
    await sleep(20);
    assert.equal(runs.length, 0);
    assert.equal(b.size, 0);
  });
});
