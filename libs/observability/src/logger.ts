import { isSpanContextValid, trace } from "@opentelemetry/api";
import {
  type DestinationStream,
  type Logger,
  type LoggerOptions,
  levels,
  pino,
  stdTimeFunctions,
} from "pino";

export type { Logger } from "pino";

export interface LoggerConfig {
  service: string;
  /** Overrides `LOG_LEVEL`; defaults to `info`. */
  level?: string;
  /** Where JSON lines go; stdout when omitted (tests pass a capturing stream). */
  destination?: DestinationStream;
}

/**
 * JSON logger for a service. Every line carries `service`, an ISO `time`, a string `level`
 * and, inside an active span, its `trace_id`/`span_id` so logs join up with traces.
 * Per-key loggers: `log.child({ controller, key })`.
 */
export function createLogger(config: LoggerConfig): Logger {
  const requested = config.level ?? process.env.LOG_LEVEL ?? "info";
  // pino throws on an unknown level; a typo in an env var should not crash the service.
  const known = Object.hasOwn(levels.values, requested) || requested === "silent";
  const options: LoggerOptions = {
    level: known ? requested : "info",
    base: { service: config.service },
    timestamp: stdTimeFunctions.isoTime,
    // Label instead of pino's numeric level: readable in any log store without a mapping.
    formatters: { level: (label) => ({ level: label }) },
    mixin: traceFields,
  };
  const log = config.destination ? pino(options, config.destination) : pino(options);
  if (!known) log.warn({ requested }, "unknown log level, using info");
  return log;
}

function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const ctx = span.spanContext();
  if (!isSpanContextValid(ctx)) return {};
  return { trace_id: ctx.traceId, span_id: ctx.spanId };
}
