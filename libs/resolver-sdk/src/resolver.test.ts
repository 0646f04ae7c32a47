import assert from "node:assert/strict";
import { test } from "node:test";
import { isPending, pending } from "./resolver.ts";

test("pending(): a message and a positive wake-up time, both optional; isPending tells it from an answer", () => {
  assert.deepEqual(pending(), { pending: true, message: undefined, wakeAfterMs: undefined });
  assert.deepEqual(pending({ message: "pod running", wakeAfterMs: 1500 }), {
    pending: true,
    message: "pod running",
    wakeAfterMs: 1500,
  });
  for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => pending({ wakeAfterMs: bad }), RangeError, String(bad));
  }
  assert.equal(isPending(pending()), true);
  assert.equal(isPending({ data: new Uint8Array() }), false);
});
