import assert from "node:assert/strict";
import { test } from "node:test";
import { ResolutionError } from "./errors.ts";
import { readCappedBody } from "./response-body.ts";

/** A body sent in chunks with no declared length, so only the streamed count can stop it. */
function streamed(chunks: number, size: number): Response {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < chunks) c.enqueue(new Uint8Array(size));
      else c.close();
    },
  });
  return new Response(body);
}

const tooLarge = (message: RegExp) => (err: unknown) =>
  err instanceof ResolutionError && err.reason === "TooLarge" && message.test(err.message);

test("a body within the cap is read whole", async () => {
  const data = await readCappedBody(streamed(3, 1000), "param x", 3000);
  assert.equal(data.byteLength, 3000);
});

test("a declared length over the cap is refused before reading, in the size checks' words", async () => {
  const res = new Response(new Uint8Array(10), { headers: { "content-length": String(2 * 1024 * 1024) } });
  await assert.rejects(
    readCappedBody(res, 'param "url": u'),
    tooLarge(/^param "url": u is over the 1 MiB limit for resolved data$/),
  );
});

test("a streamed body is cut off once past the cap", async () => {
  await assert.rejects(
    readCappedBody(streamed(100, 1024), "param y", 64 * 1024),
    tooLarge(/^param y is over the 64 KiB limit for resolved data$/),
  );
  await assert.rejects(
    readCappedBody(streamed(2, 600), "param z", 1000),
    tooLarge(/over the 1000-byte limit/),
  );
});
