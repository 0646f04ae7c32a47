import assert from "node:assert/strict";
import { test } from "node:test";
import { SECONDS_BUCKETS, setupMetrics } from "./metrics.ts";

test("renders instruments under the exact ARCHITECTURE names", async (t) => {
  const m = setupMetrics("test-service");
  t.after(() => m.shutdown());

  // Named with _total already: kept as is. Named without: the exporter appends _total.
  m.meter.createCounter("quarry_test_total", { description: "test counter" }).add(1, { type: "git" });
  m.meter.createCounter("quarry_bare").add(2, { type: "oci" });
  const duration = m.meter.createHistogram("quarry_resolution_duration_seconds", {
    description: "resolution duration",
    unit: "s",
    advice: { explicitBucketBoundaries: [...SECONDS_BUCKETS] },
  });
  duration.record(0.3, { type: "git", outcome: "success" });
  duration.record(2, { type: "git", outcome: "success" });
  m.meter.createUpDownCounter("quarry_requests_inflight").add(2, { type: "git" });
  m.meter
    .createObservableGauge("quarry_workqueue_depth")
    .addCallback((r) => r.observe(3, { controller: "resolution" }));

  const text = await m.render();
  const lines = text.split("\n");
  const has = (line: string) => assert.ok(lines.includes(line), `missing line ${line} in:\n${text}`);

  has("# TYPE quarry_test_total counter");
  has('quarry_test_total{type="git"} 1');
  has('quarry_bare_total{type="oci"} 2');
  has("# TYPE quarry_resolution_duration_seconds histogram");
  has('quarry_resolution_duration_seconds_count{type="git",outcome="success"} 2');
  has('quarry_resolution_duration_seconds_sum{type="git",outcome="success"} 2.3');
  has('quarry_resolution_duration_seconds_bucket{type="git",outcome="success",le="0.25"} 0');
  has('quarry_resolution_duration_seconds_bucket{type="git",outcome="success",le="0.5"} 1');
  has('quarry_resolution_duration_seconds_bucket{type="git",outcome="success",le="2.5"} 2');
  has('quarry_resolution_duration_seconds_bucket{type="git",outcome="success",le="+Inf"} 2');
  has("# TYPE quarry_requests_inflight gauge");
  has('quarry_requests_inflight{type="git"} 2');
  has('quarry_workqueue_depth{controller="resolution"} 3');
  assert.doesNotMatch(text, /otel_scope/, "no scope labels on series");
  assert.doesNotMatch(text, /_seconds_seconds|_total_total/);
  assert.match(text, /^target_info\{.*service_name="test-service"/m);
});

test("every service exports its process's CPU and memory under client_golang's names", async (t) => {
  const m = setupMetrics("test-service");
  t.after(() => m.shutdown());
  const text = await m.render();
  const value = (name: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    assert.ok(line, `no ${name} in:\n${text}`);
    return Number(line.split(" ")[1]);
  };
  assert.match(text, /^# TYPE process_cpu_seconds_total counter$/m);
  assert.ok(value("process_cpu_seconds_total") > 0);
  // this process's RSS, not a heap figure: at least the V8 heap in use
  assert.ok(value("process_resident_memory_bytes") >= value("nodejs_heap_size_used_bytes"));
  assert.ok(value("nodejs_heap_size_used_bytes") > 1 << 20);
  const start = value("process_start_time_seconds");
  assert.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 2, `start ${start}`);
});
