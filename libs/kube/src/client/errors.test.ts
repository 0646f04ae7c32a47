import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import { Controller } from "../queue/controller.ts";
import { runWorkers, WorkQueue } from "../queue/workqueue.ts";
import { FakeClock } from "../testing/fake-clock.ts";
import { ExponentialBackoff } from "../time/backoff.ts";
import {
  asTransientError,
  causeChain,
  isPermanentError,
  PermanentError,
  TransientError,
  transientBackoff,
  transientRetryAfter,
} from "./errors.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("a PermanentError wrapped twice is still permanent", () => {
  const inner = new PermanentError("bad spec");
  const wrapped = new Error("reconcile ns/a", { cause: new Error("render", { cause: inner }) });
  assert.equal(isPermanentError(wrapped), true);
  assert.equal(isPermanentError(inner), true);
  assert.equal(asTransientError(wrapped), undefined);
  assert.equal(isPermanentError(new Error("plain")), false);
  assert.equal(isPermanentError("a string"), false);
  assert.equal(isPermanentError(undefined), false);
});

test("the outermost classified error decides", () => {
  const transientOverPermanent = new TransientError("retry", { cause: new PermanentError("inner") });
  assert.equal(isPermanentError(transientOverPermanent), false);
  assert.equal(asTransientError(transientOverPermanent), transientOverPermanent);
  const permanentOverTransient = new PermanentError("give up", {
    cause: new TransientError("429", { retryAfterMs: 5000 }),
  });
  assert.equal(isPermanentError(permanentOverTransient), true);
  assert.equal(transientRetryAfter(permanentOverTransient), undefined);
});

test("a TransientError's retryAfterMs is found through wrappers", () => {
  const inner = new TransientError("429", { retryAfterMs: 7000 });
  assert.equal(transientRetryAfter(new Error("fetch", { cause: inner })), 7000);
  assert.equal(asTransientError(new Error("fetch", { cause: inner })), inner);
  // a TransientError wrapper without its own Retry-After defers to the one it wraps
  assert.equal(transientRetryAfter(new TransientError("attempt 2 failed", { cause: inner })), 7000);
  assert.equal(transientRetryAfter(new TransientError("no hint")), undefined);
  assert.equal(transientRetryAfter(new Error("plain")), undefined);
});

test("cause chains are bounded and cycles end the walk", () => {
  const a = new Error("a");
  const b = new Error("b", { cause: a });
  (a as { cause?: unknown }).cause = b;
  assert.deepEqual([...causeChain(a)], [a, b]);
  assert.equal(isPermanentError(a), false);

  let deep: unknown = new PermanentError("too deep to see");
  for (let i = 0; i < 100; i++) deep = new Error(`wrap ${i}`, { cause: deep });
  assert.equal([...causeChain(deep)].length, 32);
  assert.equal(isPermanentError(deep), false);
});

test("runWorkers honours a Retry-After found through a wrapper", async () => {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock, backoff: new ExponentialBackoff({ maxMs: 1000, random: () => 0 }) });
  let calls = 0;
  const workers = runWorkers(
    queue,
    1,
    () => {
      calls++;
      throw new Error("resolve", { cause: new TransientError("429", { retryAfterMs: 5000 }) });
    },
    { onError: () => {} },
  );
  queue.add("a");
  await flush();
  assert.equal(calls, 1);
  assert.equal(clock.nextTimerAt(), 5000, "the wrapped Retry-After beats the 50 ms backoff");
  queue.shutDown();
  await workers;
});

test("Controller drops a key whose reconcile threw a wrapped PermanentError", async () => {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock });
  let calls = 0;
  const c = new Controller({
    name: "t",
    log,
    queue,
    concurrency: 1,
    reconciler: {
      reconcile: async () => {
        calls++;
        throw new Error("reconcile", { cause: new Error("render", { cause: new PermanentError("bad") }) });
      },
    },
  });
  c.start();
  c.enqueue("ns/a");
  await flush();
  assert.equal(calls, 1);
  assert.equal(queue.delayedCount(), 0, "not requeued");
  assert.equal(queue.numRequeues("ns/a"), 0);
  await c.stop();
});

test("a TransientError's own backoff is found through wrappers, not past a PermanentError", () => {
  const own = new TransientError("attempt 1 failed", { backoffMs: 2000, retryAfterMs: 500 });
  assert.equal(transientBackoff(new Error("wrapped", { cause: own })), 2000);
  assert.equal(transientRetryAfter(own), 500);
  assert.equal(transientBackoff(new PermanentError("stop", { cause: own })), undefined);
  assert.equal(transientBackoff(new TransientError("no schedule")), undefined);
});
