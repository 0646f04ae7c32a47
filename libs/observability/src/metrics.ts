import { diag, type Meter, metrics } from "@opentelemetry/api";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { registerProcessMetrics } from "./process-metrics.ts";

export interface Metrics {
  /** Create instruments here; names are the Prometheus names (see README "Metric names"). */
  meter: Meter;
  /** Current values in Prometheus text format 0.0.4. */
  render(): Promise<string>;
  shutdown(): Promise<void>;
}

/**
 * Histogram buckets for durations in seconds. The SDK's default buckets (0..10000) are
 * meant for milliseconds, so pass these as `advice.explicitBucketBoundaries`.
 */
export const SECONDS_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export function setupMetrics(service: string): Metrics {
  // No HTTP server of its own: the ops server serves /metrics through render().
  // Scope labels (otel_scope_name=...) would be added to every series; drop them so series
  // look exactly like the names in ARCHITECTURE.md §7.
  const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    readers: [exporter],
  });
  // Global registration lets libraries that use the OTel API record into the same registry;
  // it fails (returns false) if something registered first, which only happens in tests.
  const registered = metrics.setGlobalMeterProvider(provider);
  // Same settings as the exporter: no prefix, no timestamps, target_info kept, no scope labels.
  const serializer = new PrometheusSerializer(undefined, false, undefined, false, true);
  const meter = provider.getMeter(service);
  registerProcessMetrics(meter);

  return {
    meter,
    async render() {
      const { resourceMetrics, errors } = await exporter.collect();
      if (errors.length > 0) diag.error("metrics collection errors", ...errors);
      return serializer.serialize(resourceMetrics);
    },
    async shutdown() {
      if (registered) metrics.disable();
      await provider.shutdown();
    },
  };
}
