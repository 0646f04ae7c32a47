import { createRequire } from "node:module";
import {
  type Attributes,
  type Context,
  context,
  DiagLogLevel,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { RateLimitedDiagLogger } from "./diag-logger.ts";
import type { Logger } from "./logger.ts";
import { otlpTracesUrl } from "./otlp-endpoint.ts";
import { OutageReportingExporter } from "./outage-reporting-exporter.ts";

const SCOPE = "@quarry/observability";

export interface Tracing {
  tracer: Tracer;
  /** Where spans are exported; undefined when they stay in the process (no OTLP endpoint set). */
  exportUrl: string | undefined;
  /** Exports the spans still queued (at most flushTimeoutMs), then turns tracing off. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Receives the exporter's outage lines and the SDK's warnings; required to export. */
  log?: Logger;
  /** Longest shutdown waits for queued spans to leave; a collector that is down must not hold up the drain. */
  flushTimeoutMs?: number;
}

const FLUSH_TIMEOUT_MS = 5_000;
/** The SDK's warnings of one kind reach the log at most this often. */
const DIAG_INTERVAL_MS = 5 * 60_000;

let active: Tracing | undefined;

/**
 * The OTLP exporter, loaded only when spans are exported: with its protobuf encoder it is ~90
 * modules and several MiB of RSS that a service without a collector should not carry.
 */
function otlpExporter(): SpanExporter {
  const lib = createRequire(import.meta.url)(
    "@opentelemetry/exporter-trace-otlp-proto",
  ) as typeof import("@opentelemetry/exporter-trace-otlp-proto");
  return new lib.OTLPTraceExporter();
}

/**
 * Registers the global tracer provider, W3C propagator and AsyncLocalStorage context
 * manager. Idempotent: OTel globals can be set once per process, so later calls return the
 * first setup.
 *
 * With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set and a logger
 * given, spans are batched and exported over OTLP/HTTP (protobuf, the spec's default protocol).
 * The SDK reads OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_*, the exporter its OTEL_EXPORTER_OTLP_*
 * (headers, timeout, compression, TLS); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are
 * merged over the service's own name.
 * Without an endpoint spans are only used for ids (log correlation, propagation).
 */
export function setupTracing(service: string, options: TracingOptions = {}): Tracing {
  if (active) return active;
  const log = options.log;
  const url = log ? otlpTracesUrl(process.env) : undefined;
  // before the provider: it reports a malformed OTEL_TRACES_SAMPLER through diag as it is built
  if (url && log)
    diag.setLogger(new RateLimitedDiagLogger({ log, intervalMs: DIAG_INTERVAL_MS }), DiagLogLevel.WARN);
  const base = resourceFromAttributes({ "service.name": service });
  const provider =
    url && log
      ? new BasicTracerProvider({
          // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the service's own name
          resource: base.merge(detectResources({ detectors: [envDetector] })),
          spanProcessors: [new BatchSpanProcessor(new OutageReportingExporter(otlpExporter(), { url, log }))],
        })
      : new BasicTracerProvider({ resource: base });
  if (url) log?.info({ url }, "exporting spans over OTLP/HTTP");
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const flushTimeoutMs = options.flushTimeoutMs ?? FLUSH_TIMEOUT_MS;
  const tracing: Tracing = {
    tracer: trace.getTracer(service),
    exportUrl: url,
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), flushTimeoutMs);
      });
      const outcome = await Promise.race([
        provider.shutdown().then(
          () => "flushed" as const,
          () => "flushed" as const,
        ),
        gaveUp,
      ]);
      clearTimeout(timer);
      if (outcome === "timeout" && url)
        log?.warn({ url, flushTimeoutMs }, "queued spans not exported before shutdown: dropped");
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
      active = undefined;
    },
  };
  active = tracing;
  return tracing;
}

// A local propagator: the annotation format is always W3C, whether or not setupTracing ran.
const w3c = new W3CTraceContextPropagator();

/** The caller's context (its active span, if any): the parent for a span that continues the caller's work. */
export function activeContext(): Context {
  return context.active();
}

/** Context to parent spans on, from a `traceparent` annotation value; ROOT_CONTEXT if absent or invalid. */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

/** `traceparent` value for the given (default: active) context, to stamp on annotations. */
export function currentTraceparent(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  w3c.inject(ctx, carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/**
 * Runs fn in a new span that is a child of parentCtx; the span is active inside fn (so logs
 * carry its ids and nested spans become its children), ends when fn settles, and records
 * a thrown error before rethrowing it.
 */
export async function withSpan<T>(
  name: string,
  parentCtx: Context,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
): Promise<T> {
  const span = trace.getTracer(SCOPE).startSpan(name, { attributes }, parentCtx);
  return context.with(trace.setSpan(parentCtx, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: err instanceof Error ? err.message : String(err),
      });
      throw err;
    } finally {
      span.end();
    }
  });
}
