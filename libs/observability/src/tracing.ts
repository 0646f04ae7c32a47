import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";

const SCOPE = "@quarry/observability";

export interface Tracing {
  tracer: Tracer;
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/**
 * Registers the global tracer provider, W3C propagator and AsyncLocalStorage context
 * manager. Idempotent: OTel globals can be set once per process, so later calls return the
 * first setup.
 */
export function setupTracing(service: string): Tracing {
  if (active) return active;
  // TODO: when OTEL_EXPORTER_OTLP_ENDPOINT is set, add a BatchSpanProcessor with an OTLP
  // exporter. Until then spans are only used for ids (log correlation, propagation).
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracing: Tracing = {
    tracer: trace.getTracer(service),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      active = undefined;
    },
  };
  active = tracing;
  return tracing;
}

// A local propagator: the annotation format is always W3C, whether or not setupTracing ran.
const w3c = new W3CTraceContextPropagator();

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
