import assert from "node:assert/strict";
import { test } from "node:test";
import { readCapped } from "./capped-read.ts";

function streamOf(...chunks: string[]): { body: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(new TextEncoder().encode(chunks[i++]));
      else c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { body, cancelled: () => cancelled };
}

test("readCapped returns every byte up to and including the cap", async () => {
  const seen: number[] = [];
  const { body } = streamOf("abc", "def");
  const bytes = await readCapped(body, 6, (c) => seen.push(c.byteLength));
  assert.equal(bytes?.toString(), "abcdef");
  assert.deepEqual(seen, [3, 3]);
});

test("readCapped cancels the stream and returns undefined past the cap", async () => {
  const seen: number[] = [];
  const s = streamOf("abc", "def", "ghi");
  assert.equal(await readCapped(s.body, 5, (c) => seen.push(c.byteLength)), undefined);
  assert.ok(s.cancelled(), "the rest of the body is not read");
  assert.deepEqual(seen, [3], "the chunk that runs over is never handed on");
});

test("readCapped of no body is empty", async () => {
  assert.equal((await readCapped(null, 10))?.byteLength, 0);
});
