export {
  type Attributes,
  type Context,
  type Meter,
  ROOT_CONTEXT,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
export { createLogger, type Logger, type LoggerConfig } from "./logger.ts";
export { type Metrics, SECONDS_BUCKETS, setupMetrics } from "./metrics.ts";
export { otlpTracesUrl } from "./otlp-endpoint.ts";
export {
  type Check,
  type CheckResult,
  type OpsServer,
  type OpsServerOptions,
  startOpsServer,
} from "./server.ts";
export { onShutdown, type ShutdownOptions } from "./shutdown.ts";
export {
  activeContext,
  contextFromTraceparent,
  currentTraceparent,
  setupTracing,
  type Tracing,
  type TracingOptions,
  withSpan,
} from "./tracing.ts";
