import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "./logger.ts";
import { setupMetrics } from "./metrics.ts";
import { type CheckResult, startOpsServer } from "./server.ts";

test("serves probes and metrics on an ephemeral port", async (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    service: "s",
    level: "debug",
    destination: { write: (m) => lines.push(JSON.parse(m)) },
  });
  const metrics = setupMetrics("s");
  t.after(() => metrics.shutdown());
  metrics.meter.createCounter("quarry_test_total").add(1, { type: "git" });

  let ready: CheckResult = { ok: false, detail: "informers not synced" };
  const server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    log,
    metrics,
    checks: { healthy: () => true, ready: () => ready },
  });
  t.after(() => server.close());
  assert.ok(server.port > 0);
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  const healthz = await fetch(url("/healthz"));
  assert.equal(healthz.status, 200);
  assert.deepEqual(await healthz.json(), { status: "ok" });

  const notReady = await fetch(url("/readyz"));
  assert.equal(notReady.status, 503);
  assert.deepEqual(await notReady.json(), { status: "unavailable", detail: "informers not synced" });

  ready = true;
  assert.equal((await fetch(url("/readyz"))).status, 200);

  const scrape = await fetch(url("/metrics"));
  assert.equal(scrape.status, 200);
  assert.equal(scrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  assert.match(await scrape.text(), /^quarry_test_total\{type="git"\} 1$/m);

  // Probes must not log a line per request, even at debug.
  assert.deepEqual(
    lines.map((l) => l.msg),
    ["ops server listening"],
  );
});

test("a failing or throwing check answers 503", async (t) => {
  const log = createLogger({ service: "s", destination: { write: () => {} } });
  const server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    log,
    metrics: { render: async () => "" },
    checks: {
      healthy: () => {
        throw new Error("informer stopped");
      },
      ready: async () => false,
    },
  });
  t.after(() => server.close());

  const healthz = await fetch(`http://127.0.0.1:${server.port}/healthz`);
  assert.equal(healthz.status, 503);
  assert.deepEqual(await healthz.json(), { status: "unavailable", detail: "informer stopped" });
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/readyz`)).status, 503);
});

test("a check's info goes into the probe's body beside status and detail", async (t) => {
  const log = createLogger({ service: "s", destination: { write: () => {} } });
  const server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    log,
    metrics: { render: async () => "" },
    checks: {
      healthy: () => true,
      ready: () => ({ ok: true, info: { buckets: { held: ["svc.00-of-02"], total: 2 }, status: "ignored" } }),
    },
  });
  t.after(() => server.close());
  const readyz = await fetch(`http://127.0.0.1:${server.port}/readyz`);
  assert.equal(readyz.status, 200);
  assert.deepEqual(await readyz.json(), { status: "ok", buckets: { held: ["svc.00-of-02"], total: 2 } });
});

test("unknown paths answer 404, HEAD as GET without a body; close ends kept-alive sockets", async (t) => {
  const log = createLogger({ service: "s", destination: { write: () => {} } });
  const server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    log,
    metrics: { render: async () => "up 1\n" },
    checks: { healthy: () => true, ready: () => true },
  });
  let closed = false;
  t.after(() => (closed ? undefined : server.close()));
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
  assert.equal((await fetch(url("/nothing"))).status, 404);
  assert.equal((await fetch(url("/metrics?x=1"))).status, 200);
  assert.equal((await fetch(url("/readyz"), { method: "POST" })).status, 404);
  const head = await fetch(url("/metrics"), { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), "5");
  assert.equal(await head.text(), "");
  // fetch keeps its socket alive: close must not wait for it
  await server.close();
  closed = true;
});
