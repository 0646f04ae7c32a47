// A real OTLP receiver for the tracing scenarios: Jaeger v2 (build-jaeger.sh, from the Go
// module proxy, cached) started by the test process on 127.0.0.1 with an OTLP/HTTP receiver and
// in-memory storage; tests ask its query API for one trace by id. Only the receiver and the
// query API run (no sampling endpoints, health check or self-metrics ports to collide with).
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./controlplane.ts";
import { waitUntil } from "./wait.ts";

const here = dirname(fileURLToPath(import.meta.url));

/** One span as Jaeger's query API returns it, with its process's service name resolved. */
export interface StoredSpan {
  traceId: string;
  spanId: string;
  /** The span this one is a child of, in the same trace; undefined for the root. */
  parentSpanId: string | undefined;
  name: string;
  service: string;
  attributes: Record<string, unknown>;
  startMicros: number;
  durationMicros: number;
}

export interface Jaeger {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT should say (http://127.0.0.1:<port>). */
  otlpEndpoint: string;
  queryUrl: string;
  /** The spans stored under traceId, [] when Jaeger has none (yet). */
  trace(traceId: string): Promise<StoredSpan[]>;
  logs(): string;
  stop(): Promise<void>;
}

let binary: string | undefined;

/** Builds (once, then cached by version) and locates the jaeger binary. */
export function jaegerBinary(): string {
  if (binary) return binary;
  const out = execFileSync("bash", [join(here, "build-jaeger.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = out.trim().split("\n");
  binary = join(lines[lines.length - 1]!, "jaeger");
  return binary;
}

function config(otlpPort: number, queryPort: number, queryGrpcPort: number): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${queryGrpcPort}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlpPort}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

interface QueryTrace {
  traceID: string;
  spans: {
    traceID: string;
    spanID: string;
    operationName: string;
    references?: { refType: string; traceID: string; spanID: string }[];
    startTime: number;
    duration: number;
    tags?: { key: string; value: unknown }[];
    processID: string;
  }[];
  processes: Record<string, { serviceName: string }>;
}

export async function startJaeger(): Promise<Jaeger> {
  const bin = jaegerBinary();
  const dir = mkdtempSync(join(tmpdir(), "quarry-jaeger-"));
  const [otlpPort, queryPort, queryGrpcPort] = [await freePort(), await freePort(), await freePort()];
  const configFile = join(dir, "config.yaml");
  writeFileSync(configFile, config(otlpPort, queryPort, queryGrpcPort));
  const logFile = join(dir, "jaeger.log");
  const fd = openSync(logFile, "a");
  const child = spawn(bin, ["--config", configFile], { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const queryUrl = `http://127.0.0.1:${queryPort}`;
  const logs = () => readFileSync(logFile, "utf8");
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(
      "jaeger query API and OTLP receiver",
      async () => {
        if (child.exitCode !== null) throw new Error(`jaeger exited:\n${logs().slice(-3000)}`);
        const query = await fetch(`${queryUrl}/api/services`).catch(() => undefined);
        // an empty OTLP/HTTP post: 200 once the receiver listens
        const otlp = await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }).catch(() => undefined);
        return query?.ok && otlp?.ok ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    otlpEndpoint: `http://127.0.0.1:${otlpPort}`,
    queryUrl,
    logs,
    stop,
    async trace(traceId) {
      const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
      if (res.status === 404) return [];
      if (!res.ok) throw new Error(`jaeger GET /api/traces/${traceId}: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { data?: QueryTrace[] };
      return (body.data ?? []).flatMap((t) =>
        t.spans.map((s) => ({
          traceId: s.traceID,
          spanId: s.spanID,
          parentSpanId: s.references?.find((r) => r.refType === "CHILD_OF")?.spanID,
          name: s.operationName,
          service: t.processes[s.processID]?.serviceName ?? "",
          attributes: Object.fromEntries((s.tags ?? []).map((tag) => [tag.key, tag.value])),
          startMicros: s.startTime,
          durationMicros: s.duration,
        })),
      );
    },
  };
}
