import assert from "node:assert/strict";
import { test } from "node:test";
import { setupMetrics } from "@quarry/observability";
import { FakeClock } from "../testing/fake-clock.ts";
import { ExponentialBackoff } from "../time/backoff.ts";
import { workQueueMetrics } from "./queue-metrics.ts";
import { WorkQueue, type WorkQueueMetrics } from "./workqueue.ts";

/** Records every sink call as text, so a test reads like the sequence it expects. */
function fakeSink(): { sink: WorkQueueMetrics; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    sink: {
      add: () => calls.push("add"),
      retry: () => calls.push("retry"),
      queueDuration: (s) => calls.push(`queued ${s}s`),
      workDuration: (s) => calls.push(`worked ${s}s`),
    },
  };
}

function newQueue() {
  const clock = new FakeClock();
  const { sink, calls } = fakeSink();
  const backoff = new ExponentialBackoff({ baseMs: 100, maxMs: 1000, random: () => 0 });
  return { q: new WorkQueue({ clock, backoff, metrics: sink }), clock, calls };
}

test("adds count once per queued key; queue and work durations come from the clock", async () => {
  const { q, clock, calls } = newQueue();
  q.add("a");
  clock.advance(1000);
  q.add("a"); // already queued: not an add, and the wait still started at the first add
  q.addSlow("b");
  q.add("b"); // promotion from the slow lane: the same add
  clock.advance(500);
  assert.equal(await q.get(), "a");
  clock.advance(2000);
  q.done("a");
  assert.equal(await q.get(), "b");
  q.done("b");
  assert.deepEqual(calls, ["add", "add", "queued 1.5s", "worked 2s", "queued 2.5s", "worked 0s"]);
});

test("a key added while processing counts once and its wait includes the rest of the processing", async () => {
  const { q, clock, calls } = newQueue();
  q.add("a");
  assert.equal(await q.get(), "a");
  clock.advance(100);
  q.add("a");
  q.addSlow("a");
  q.add("a");
  clock.advance(300);
  q.done("a");
  clock.advance(50);
  assert.equal(await q.get(), "a");
  q.done("a");
  assert.deepEqual(calls, ["add", "queued 0s", "add", "worked 0.4s", "queued 0.35s", "worked 0s"]);
});

test("rate-limited re-adds count as retries, then as an add when the delay fires", async () => {
  const { q, clock, calls } = newQueue();
  q.addRateLimited("a");
  assert.deepEqual(calls, ["retry"]);
  clock.advance(100);
  assert.deepEqual(calls, ["retry", "add"]);
  assert.equal(await q.get(), "a");
  assert.deepEqual(calls, ["retry", "add", "queued 0s"], "the wait starts when the delay is over");
  q.done("a");
  q.shutDown();
  q.addRateLimited("a");
  assert.equal(calls.filter((c) => c === "retry").length, 1, "no retries after shutdown");
});

test("unfinishedWork sums and maxes the keys in flight", async () => {
  const { q, clock } = newQueue();
  assert.deepEqual(q.unfinishedWork(), { totalSeconds: 0, longestSeconds: 0 });
  q.add("a");
  q.add("b");
  await q.get();
  clock.advance(3000);
  await q.get();
  clock.advance(1000);
  assert.deepEqual(q.unfinishedWork(), { totalSeconds: 5, longestSeconds: 4 });
  q.done("a");
  assert.deepEqual(q.unfinishedWork(), { totalSeconds: 1, longestSeconds: 1 });
});

test("workQueueMetrics renders client-go's series per controller", async () => {
  const metrics = setupMetrics("test");
  try {
    const clock = new FakeClock();
    const owners: { name: string; queue: WorkQueue }[] = [];
    const sinkFor = workQueueMetrics(metrics.meter, () => owners);
    const queue = new WorkQueue({ clock, metrics: sinkFor("lifecycle") });
    owners.push({ name: "lifecycle", queue });
    queue.add("a");
    queue.add("b");
    clock.advance(2000);
    queue.done((await queue.get())!);
    clock.advance(500);
    await queue.get(); // b, waited 2.5 s
    clock.advance(250);
    queue.addRateLimited("c");
    const text = await metrics.render();
    for (const line of [
      'quarry_workqueue_adds_total{controller="lifecycle"} 2',
      'quarry_workqueue_retries_total{controller="lifecycle"} 1',
      'quarry_workqueue_depth{controller="lifecycle"} 0',
      'quarry_workqueue_queue_duration_seconds_count{controller="lifecycle"} 2',
      'quarry_workqueue_queue_duration_seconds_bucket{controller="lifecycle",le="1"} 0',
      'quarry_workqueue_queue_duration_seconds_bucket{controller="lifecycle",le="2.5"} 2',
      'quarry_workqueue_work_duration_seconds_count{controller="lifecycle"} 1',
      'quarry_workqueue_unfinished_work_seconds{controller="lifecycle"} 0.25',
      'quarry_workqueue_longest_running_processor_seconds{controller="lifecycle"} 0.25',
    ]) {
      assert.ok(text.includes(line), `missing ${line} in\n${text}`);
    }
    queue.shutDown();
  } finally {
    await metrics.shutdown();
  }
});
