import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import { FakeClock } from "./clock.ts";
import { Controller, type ReconcileContext } from "./controller.ts";
import { WorkQueue } from "./workqueue.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("reconcile is told its attempt: 1, then one more per failure in a row, back to 1 after a success", async () => {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock });
  const seen: number[] = [];
  let failures = 2;
  const c = new Controller({
    name: "t",
    log,
    queue,
    concurrency: 1,
    reconciler: {
      reconcile: async (_key: string, ctx: ReconcileContext) => {
        seen.push(ctx.attempt);
        if (failures-- > 0) throw new Error("transient");
        return undefined;
      },
    },
  });
  c.start();
  c.enqueue("ns/a");
  await flush();
  for (let i = 0; i < 2; i++) {
    clock.advance(clock.nextTimerAt()! - clock.now());
    await flush();
  }
  c.enqueue("ns/a");
  await flush();
  assert.deepEqual(seen, [1, 2, 3, 1]);
  await c.stop();
});

test("keys this replica does not own are not queued, and are dropped at dequeue once ownership moves", async () => {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock });
  let owned = new Set(["ns/a", "ns/b"]);
  const seen: string[] = [];
  const c = new Controller({
    name: "t",
    log,
    queue,
    concurrency: 1,
    owns: (key) => owned.has(key),
    reconciler: {
      reconcile: async (key: string) => {
        seen.push(key);
        return undefined;
      },
    },
  });
  c.enqueue("ns/a");
  c.enqueueSlow("ns/c"); // someone else's
  c.enqueueAfter("ns/c", 10);
  c.enqueue("ns/b");
  assert.equal(queue.depth(), 2);
  owned = new Set(["ns/a"]); // ns/b's bucket moved while it waited
  c.start();
  await flush();
  clock.advance(100);
  await flush();
  assert.deepEqual(seen, ["ns/a"]);
  await c.stop();
});
