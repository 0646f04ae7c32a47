// The process's own CPU and memory under the names Prometheus client libraries use (client_golang's
// process collector, prom-client's defaults), read at scrape time: a dashboard or an alert written
// for any other exporter's process_* series works on Quarry's services unchanged. Only what the
// services' panels need; no event-loop or GC series.
import type { Meter } from "@opentelemetry/api";

export function registerProcessMetrics(meter: Meter): void {
  const startSeconds = (Date.now() - performance.now()) / 1000;
  meter
    .createObservableCounter("process_cpu_seconds_total", {
      description: "Total user and system CPU time spent in seconds",
    })
    .addCallback((r) => {
      const { user, system } = process.cpuUsage();
      r.observe((user + system) / 1e6);
    });
  meter
    .createObservableGauge("process_resident_memory_bytes", { description: "Resident memory size in bytes" })
    .addCallback((r) => r.observe(process.memoryUsage.rss()));
  meter
    .createObservableGauge("process_start_time_seconds", {
      description: "Start time of the process since unix epoch in seconds",
    })
    .addCallback((r) => r.observe(startSeconds));
  meter
    .createObservableGauge("nodejs_heap_size_used_bytes", { description: "V8 heap in use, in bytes" })
    .addCallback((r) => r.observe(process.memoryUsage().heapUsed));
}
