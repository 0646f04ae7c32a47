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
