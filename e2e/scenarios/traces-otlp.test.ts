// With an OTLP endpoint set, one request is one trace across processes: `quarry resolve` (the
// requester library in the CLI) creates the request inside its span and stamps the traceparent
// annotation; the lifecycle controller and the cluster resolver continue that trace and export
// their spans to a real Jaeger v2, which returns the whole trace by id.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { ANNOTATION_TRACEPARENT } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { type Jaeger, type StoredSpan, startJaeger } from "@quarry/devcluster/jaeger";
import { repoRoot } from "@quarry/devcluster/paths";
import { waitUntil } from "@quarry/devcluster/wait";
import { getRequest, processName, taskManifest, useScenario } from "@quarry/harness/scenario";

const run = promisify(execFile);
let jaeger: Jaeger;
// a short batch delay: spans reach Jaeger within the test's patience, not 5 s later
const otel = () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: "200" });

const scenario = useScenario("traces-otlp", {
  setup: async (scn) => {
    await applyObject(scn.admin, taskManifest(scn.namespace, "hello"));
  },
});
before(async () => {
  jaeger = await startJaeger();
  const scn = scenario();
  await scn.start("lifecycle-controller", otel());
  await scn.start("cluster-resolver", otel());
});
after(() => jaeger?.stop());

/** The spans as an indented tree, for the failure message and the test log. */
function tree(spans: StoredSpan[]): string {
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of spans
      .filter((x) => x.parentSpanId === parent)
      .sort((a, b) => a.startMicros - b.startMicros)) {
      lines.push(`${"  ".repeat(depth)}${s.service}: ${s.name} (${(s.durationMicros / 1000).toFixed(1)} ms)`);
      walk(s.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join("\n");
}

test("quarry resolve, the lifecycle controller and the cluster resolver write one trace", async () => {
  const scn = scenario();
  const { stdout, stderr } = await run(
    process.execPath,
    [
      join(repoRoot, "cli", "src", "main.ts"),
      "resolve",
      "cluster",
      "kind=task",
      "name=hello",
      "-n",
      scn.namespace,
      "--kubeconfig",
      scn.cp.adminKubeconfig,
    ],
    { timeout: 60_000, env: { ...process.env, ...otel() } },
  );
  assert.match(stdout, /kind: Task/);
  const name = /# request: [^/]+\/(\S+)/.exec(stderr)?.[1];
  assert.ok(name, `request name in stderr: ${stderr}`);
  const rr = await getRequest(scn.admin, scn.namespace, name);
  const traceId = rr.metadata.annotations?.[ANNOTATION_TRACEPARENT]?.split("-")[1];
  assert.ok(traceId, "the request carries a traceparent");

  const wanted = [
    "quarry.resolve",
    "resolution.request",
    "resolution.wait",
    "lifecycle.reconcile",
    "cluster.resolve",
  ];
  const spans = await waitUntil(
    `trace ${traceId} with ${wanted.join(", ")}`,
    async () => {
      const found = await jaeger.trace(traceId);
      return wanted.every((n) => found.some((s) => s.name === n)) ? found : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 250 },
  );
  console.log(`trace ${traceId}:\n${tree(spans)}`);

  const services = new Set(spans.map((s) => s.service));
  // in all-in-one mode the lifecycle controller's and the resolver's spans are the process's, "quarry"
  for (const service of [
    "quarry-cli",
    ...["lifecycle-controller", "cluster-resolver"].map((x) => processName(scn, x)),
  ])
    assert.ok(services.has(service), `${service} in ${[...services].join(", ")}`);
  assert.ok(
    spans.every((s) => s.traceId === traceId),
    "every span in the one trace",
  );

  const one = (n: string) => spans.find((s) => s.name === n)!;
  const root = one("quarry.resolve");
  const create = one("resolution.request");
  assert.equal(root.parentSpanId, undefined, "the CLI's span is the root");
  assert.equal(create.parentSpanId, root.spanId);
  assert.equal(one("resolution.wait").parentSpanId, root.spanId);
  assert.equal(create.attributes["quarry.request"], `${scn.namespace}/${name}`);
  assert.equal(create.attributes["quarry.adopted"], false);
  // the traceparent annotation names the create: the services' spans are its children
  const reconciles = spans.filter((s) => s.name === "lifecycle.reconcile");
  const resolve = one("cluster.resolve");
  for (const s of [...reconciles, resolve]) assert.equal(s.parentSpanId, create.spanId, s.name);
  assert.equal(resolve.service, processName(scn, "cluster-resolver"));
  assert.equal(resolve.attributes["quarry.outcome"], "succeeded");
  assert.equal(resolve.attributes["quarry.request"], `${scn.namespace}/${name}`);
  for (const s of reconciles) assert.equal(s.attributes["quarry.resolver"], "cluster");
  assert.equal(one("resolution.wait").attributes["quarry.outcome"], "resolved");
});
