import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import { FakeClock } from "../testing/fake-clock.ts";
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

interface SignalRow {
  name: string;
  /** The service's stop signal, when the controller is given one. */
  service?: AbortController;
  /** What happens while a reconcile is in flight; its promise is awaited after the reconcile ends. */
  during: (c: Controller, service: AbortController | undefined) => Promise<void> | undefined;
  /** Whether the in-flight reconcile's signal is aborted by the time it ends. */
  aborted: boolean;
}

const signalRows: SignalRow[] = [
  { name: "nothing stops: the signal stays live", during: () => undefined, aborted: false },
  {
    name: "the controller stops: aborted while the reconcile is still in flight",
    during: (c) => c.stop(),
    aborted: true,
  },
  {
    name: "the service stops (its signal aborts): aborted",
    service: new AbortController(),
    during: (_c, service) => {
      service?.abort();
      return undefined;
    },
    aborted: true,
  },
  {
    name: "the service's signal given but still live: the signal stays live",
    service: new AbortController(),
    during: () => undefined,
    aborted: false,
  },
];

test("reconcile's signal: live while nothing stops, aborted once the controller or the service stops", async () => {
  for (const row of signalRows) {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen: boolean[] = [];
    const c = new Controller({
      name: "t",
      log,
      queue: new WorkQueue({ clock: new FakeClock() }),
      concurrency: 1,
      ...(row.service && { signal: row.service.signal }),
      reconciler: {
        reconcile: async (_key: string, ctx: ReconcileContext) => {
          seen.push(ctx.signal.aborted);
          await gate;
          seen.push(ctx.signal.aborted);
          return undefined;
        },
      },
    });
    c.start();
    c.enqueue("ns/a");
    await flush();
    const done = row.during(c, row.service);
    release();
    await done;
    await c.stop();
    assert.deepEqual(seen, [false, row.aborted], row.name);
  }
});

test("reconcile's log is the controller's logger, its name bound", async () => {
  const lines: string[] = [];
  const captured = createLogger({
    service: "test",
    level: "info",
    destination: { write: (l) => lines.push(l) },
  });
  const c = new Controller({
    name: "widgets",
    log: captured,
    queue: new WorkQueue({ clock: new FakeClock() }),
    concurrency: 1,
    reconciler: {
      reconcile: async (key: string, ctx: ReconcileContext) => {
        ctx.log.info({ key }, "reconciled");
        return undefined;
      },
    },
  });
  c.start();
  c.enqueue("ns/a");
  await flush();
  await c.stop();
  const line = JSON.parse(lines.find((l) => l.includes("reconciled")) ?? "{}");
  assert.equal(line.controller, "widgets");
  assert.equal(line.key, "ns/a");
});
