// A trace collector that is down costs nothing but the spans: with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a closed port, requests resolve as fast as ever, each service logs exactly one line
// saying it cannot export (not one per failed batch), and SIGTERM still exits promptly and cleanly.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import type { RunningService } from "@quarry/devcluster/service";
import {
  createRequest,
  newRequest,
  resolvedOk,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const address = srv.address();
  await new Promise((r) => srv.close(r));
  return typeof address === "object" && address ? address.port : 0;
}

const services: RunningService[] = [];
const scenario = useScenario("traces-down", {
  setup: async (scn) => {
    await applyObject(scn.admin, taskManifest(scn.namespace, "hello"));
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
      // a batch every 100 ms and a short export timeout: many failed exports within the test
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_EXPORTER_OTLP_TIMEOUT: "500",
    };
    services.push(await scn.start("lifecycle-controller", env), await scn.start("cluster-resolver", env));
  },
});

const OUTAGE_LINE = "cannot export spans to the trace collector";

test("requests resolve in normal time; one 'cannot export' line per service; clean exit", async () => {
  const scn = scenario();
  const durations: number[] = [];
  for (let i = 0; i < 6; i++) {
    const name = `down-${i}`;
    const started = Date.now();
    await createRequest(
      scn.admin,
      newRequest(
        scn.namespace,
        name,
        { "resolution.tekton.dev/type": "cluster" },
        { kind: "task", name: "hello" },
      ),
    );
    await waitForRequest(scn, name, resolvedOk, 10_000);
    durations.push(Date.now() - started);
    await new Promise((r) => setTimeout(r, 300)); // past the batch delay: each request its own batches
  }
  console.log(`resolution times with the collector down (ms): ${durations.join(", ")}`);
  for (const ms of durations) assert.ok(ms < 3_000, `resolved in ${ms} ms`);

  for (const svc of services) {
    const stopped = Date.now();
    const exit = await svc.stop();
    assert.equal(exit.code, 0, `${svc.name} exit`);
    assert.ok(Date.now() - stopped < 10_000, `${svc.name} stopped in ${Date.now() - stopped} ms`);
    const lines = svc
      .logs()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string; url?: string });
    const outage = lines.filter((l) => l.msg.includes(OUTAGE_LINE));
    assert.equal(outage.length, 1, `${svc.name}: ${JSON.stringify(outage)}`);
    assert.equal(outage[0]?.level, "warn");
    assert.match(outage[0]?.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/v1\/traces$/);
    const otelNoise = lines.filter((l) => /export|span/i.test(l.msg) && l.level === "error");
    assert.deepEqual(otelNoise, [], `${svc.name}: no error lines about spans`);
  }
});
