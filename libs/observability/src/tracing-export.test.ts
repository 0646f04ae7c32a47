// setupTracing with an OTLP endpoint: spans reach a real HTTP listener as OTLP/protobuf, a
// closed port costs one log line and no time, and shutdown flushes within its bound.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { createLogger } from "./logger.ts";
import { setupTracing, withSpan } from "./tracing.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (msg: string) => lines.push(JSON.parse(msg)) };
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

test("spans are posted to <endpoint>/v1/traces as protobuf, with the service name, on shutdown", async (t) => {
  const received: {
    path: string | undefined;
    type: string | undefined;
    auth: string | undefined;
    body: Buffer;
  }[] = [];
  const server = createServer(async (req, res) => {
    received.push({
      path: req.url,
      type: req.headers["content-type"],
      auth: req.headers.authorization,
      body: await body(req),
    });
    res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.OTEL_EXPORTER_OTLP_HEADERS = "authorization=Bearer%20t0ken";
  t.after(() => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
  });
  const out = capture();
  const tracing = setupTracing("unit-svc", { log: createLogger({ service: "unit-svc", destination: out }) });
  assert.equal(tracing.exportUrl, `http://127.0.0.1:${port}/v1/traces`);

  await withSpan("unit.exported-span", ROOT_CONTEXT, { "quarry.request": "ns/a" }, () => {});
  assert.equal(received.length, 0, "batched: nothing sent before the schedule delay or a flush");
  await tracing.shutdown();

  assert.equal(received.length, 1);
  const [post] = received;
  assert.equal(post?.path, "/v1/traces");
  assert.equal(post?.type, "application/x-protobuf");
  assert.equal(post?.auth, "Bearer t0ken", "OTEL_EXPORTER_OTLP_HEADERS honoured");
  // protobuf keeps strings as UTF-8 bytes
  assert.ok(post?.body.includes("unit.exported-span"));
  assert.ok(post?.body.includes("unit-svc"));
  assert.ok(post?.body.includes("ns/a"));
  assert.ok(out.lines.some((l) => l.msg === "exporting spans over OTLP/HTTP"));
});

test("a closed port: spans cost no time, one log line for many failed batches, shutdown bounded", async (t) => {
  const port = await closedPort();
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${port}/v1/traces`;
  process.env.OTEL_BSP_SCHEDULE_DELAY = "20";
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = "300";
  t.after(() => {
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
  });
  const out = capture();
  const tracing = setupTracing("unit-svc", {
    log: createLogger({ service: "unit-svc", destination: out }),
    flushTimeoutMs: 1_000,
  });

  const started = performance.now();
  for (let i = 0; i < 10; i++) {
    await withSpan(`unit.span-${i}`, ROOT_CONTEXT, {}, () => {});
    await new Promise((r) => setTimeout(r, 150)); // past the schedule delay: a batch each
  }
  const spanCost = performance.now() - started - 10 * 150;
  assert.ok(spanCost < 500, `spans took ${spanCost} ms beyond the sleeps`);

  const t0 = performance.now();
  await tracing.shutdown();
  assert.ok(performance.now() - t0 < 1_500, "shutdown waits at most flushTimeoutMs");

  const outage = out.lines.filter((l) => String(l.msg).includes("cannot export spans"));
  assert.equal(outage.length, 1, JSON.stringify(out.lines, null, 1));
  assert.equal(outage[0]?.level, "warn");
  assert.equal(outage[0]?.url, `http://127.0.0.1:${port}/v1/traces`);
  assert.ok(
    out.lines.every((l) => l.level !== "error"),
    "no SDK error lines for the failed batches",
  );
});
