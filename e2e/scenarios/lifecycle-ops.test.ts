// Ops surface: probes, Prometheus metrics, JSON logs, graceful SIGTERM.
import assert from "node:assert/strict";
import { test } from "node:test";
import { processName, useScenario } from "@quarry/harness/scenario";

const scenario = useScenario("lc-ops", { start: ["lifecycle-controller"] });
const service = () => scenario().services[0]!;

test("/healthz and /readyz answer 200 once informers are synced", async () => {
  assert.equal((await service().ops("/healthz")).status, 200);
  assert.equal((await service().ops("/readyz")).status, 200);
});

test("/metrics exposes the work queue depth per controller", async () => {
  const { status, body } = await service().ops("/metrics");
  assert.equal(status, 200);
  assert.match(body, /quarry_workqueue_depth\{controller="lifecycle"\} \d+/);
});

test("logs are JSON lines carrying the service name", () => {
  const lines = service().logs().trim().split("\n");
  assert.ok(lines.length > 0);
  for (const line of lines) {
    const rec = JSON.parse(line) as { service?: string; level?: string };
    // in all-in-one mode, the process's name: the same for every component
    assert.equal(rec.service, processName(scenario(), "lifecycle-controller"));
  }
});

test("SIGTERM drains and exits 0", async () => {
  const { code } = await service().stop();
  assert.equal(code, 0);
  assert.match(service().logs(), /shutdown complete/);
});
