import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { deadline } from "./deadline.ts";

test("a deadline that passes aborts with a TimeoutError, as AbortSignal.timeout does", async () => {
  const d = deadline(20);
  assert.equal(d.signal.aborted, false);
  await sleep(60);
  assert.equal(d.signal.aborted, true);
  assert.ok(d.signal.reason instanceof DOMException);
  assert.equal((d.signal.reason as DOMException).name, "TimeoutError");
});

test("the caller's abort comes through with its reason, and the deadline no longer fires", async () => {
  const outer = new AbortController();
  const d = deadline(30, outer.signal);
  const reason = new Error("stopping");
  outer.abort(reason);
  assert.equal(d.signal.aborted, true);
  assert.equal(d.signal.reason, reason);
  await sleep(60);
  assert.equal(d.signal.reason, reason, "not replaced by the timeout");
});

test("a caller's signal already aborted gives an aborted signal at once", () => {
  const outer = new AbortController();
  outer.abort(new Error("gone"));
  const d = deadline(1000, outer.signal);
  assert.equal(d.signal.aborted, true);
  assert.equal((d.signal.reason as Error).message, "gone");
  d.release();
});

test("release: no timeout afterwards, and the caller's signal keeps no listener", async () => {
  const outer = new AbortController();
  const d = deadline(20, outer.signal);
  assert.equal(getEventListeners(outer.signal, "abort").length, 1);
  d.release();
  assert.equal(getEventListeners(outer.signal, "abort").length, 0);
  await sleep(60);
  assert.equal(d.signal.aborted, false);
  outer.abort();
  assert.equal(d.signal.aborted, false, "a released call is not aborted by its caller");
});

test("a passed deadline leaves no listener on the caller's signal", async () => {
  const outer = new AbortController();
  const d = deadline(10, outer.signal);
  await sleep(40);
  assert.equal(d.signal.aborted, true);
  assert.equal(getEventListeners(outer.signal, "abort").length, 0);
});
