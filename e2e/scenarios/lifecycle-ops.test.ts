// Ops surface: probes, Prometheus metrics, JSON logs, graceful SIGTERM.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { newScenario, type Scenario } from "../harness/scenario.ts";
import type { RunningService } from "../harness/service.ts";

let scn: Scenario;
let svc: RunningService;
before(async () => {
  scn = await newScenario("lc-ops");
  svc = await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

test("/healthz and /readyz answer 200 once informers are synced", async () => {
  assert.equal((await svc.ops("/healthz")).status, 200);
  assert.equal((await svc.ops("/readyz")).status, 200);
});

test("/metrics exposes the work queue depth per controller", async () => {
  const { status, body } = await svc.ops("/metrics");
  assert.equal(status, 200);
  assert.match(body, /quarry_workqueue_depth\{controller="lifecycle"\} \d+/);
});

test("logs are JSON lines carrying the service name", () => {
  const lines = svc.logs().trim().split("\n");
  assert.ok(lines.length > 0);
  for (const line of lines) {
    const rec = JSON.parse(line) as { service?: string; level?: string };
    assert.equal(rec.service, "lifecycle-controller");
  }
});

test("SIGTERM drains and exits 0", async () => {
  const { code } = await svc.stop();
  assert.equal(code, 0);
  assert.match(svc.logs(), /shutdown complete/);
});
