import assert from "node:assert/strict";
import { test } from "node:test";
import { ROOT_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createLogger } from "./logger.ts";
import { contextFromTraceparent, currentTraceparent, setupTracing, withSpan } from "./tracing.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`;

setupTracing("test-service");

function capture(): { lines: Record<string, unknown>[]; write(msg: string): void } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (msg) => lines.push(JSON.parse(msg)) };
}

test("a span under a traceparent keeps the trace id and logs carry it", async () => {
  const out = capture();
  const log = createLogger({ service: "test-service", destination: out });

  const inner = await withSpan(
    "resolve",
    contextFromTraceparent(TRACEPARENT),
    { type: "git" },
    async (span) => {
      await new Promise((r) => setTimeout(r, 1)); // context must survive an await
      log.child({ controller: "resolution", key: "ns/a" }).info("inside");
      return { spanId: span.spanContext().spanId, traceparent: currentTraceparent() };
    },
  );

  const line = out.lines[0]!;
  assert.equal(line.trace_id, TRACE_ID);
  assert.equal(line.span_id, inner.spanId);
  assert.notEqual(inner.spanId, PARENT_SPAN_ID);
  assert.equal(inner.traceparent, `00-${TRACE_ID}-${inner.spanId}-01`);
  assert.equal(currentTraceparent(), undefined, "no active span after withSpan");
});

test("nested spans are children of the active one", async () => {
  await withSpan("outer", contextFromTraceparent(TRACEPARENT), {}, async (outer) => {
    const parent = trace.getActiveSpan();
    assert.equal(parent, outer);
    await withSpan("inner", trace.setSpan(ROOT_CONTEXT, outer), {}, (inner) => {
      assert.equal((inner as unknown as ReadableSpan).parentSpanContext?.spanId, outer.spanContext().spanId);
    });
  });
});

test("records the exception, ends the span and rethrows", async () => {
  let captured: Span | undefined;
  await assert.rejects(
    withSpan("fails", ROOT_CONTEXT, {}, async (span) => {
      captured = span;
      throw new Error("boom");
    }),
    /boom/,
  );
  const span = captured as unknown as ReadableSpan;
  assert.equal(span.ended, true);
  assert.equal(span.status.code, SpanStatusCode.ERROR);
  assert.equal(span.events[0]?.name, "exception");
  assert.equal(span.spanContext().traceId.length, 32, "root span gets a fresh trace id");
});

test("missing or malformed traceparent gives the root context", () => {
  assert.equal(contextFromTraceparent(undefined), ROOT_CONTEXT);
  assert.equal(trace.getSpanContext(contextFromTraceparent("garbage")), undefined);
  assert.equal(currentTraceparent(contextFromTraceparent(TRACEPARENT)), TRACEPARENT);
});
