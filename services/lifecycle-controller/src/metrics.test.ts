import assert from "node:assert/strict";
import { test } from "node:test";
import { setupMetrics } from "@quarry/observability";
import { timedOutCounter } from "./metrics.ts";

test("quarry_resolution_requests_timed_out_total counts by type and reason", async () => {
  const m = setupMetrics("lifecycle-test");
  try {
    const timedOut = timedOutCounter(m.meter);
    timedOut("git", "NoResolver");
    timedOut("git", "NoResolver");
    timedOut("bundles", "TimedOut");
    const text = await m.render();
    assert.match(text, /# TYPE quarry_resolution_requests_timed_out_total counter/);
    const sample = (labels: string) =>
      new RegExp(`^quarry_resolution_requests_timed_out_total\\{${labels}[^}]*\\} (\\d+)`, "m").exec(
        text,
      )?.[1];
    assert.equal(sample('type="git",reason="NoResolver"'), "2");
    assert.equal(sample('type="bundles",reason="TimedOut"'), "1");
  } finally {
    await m.shutdown();
  }
});
