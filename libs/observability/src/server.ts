import { fastify } from "fastify";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";

/** `info` goes into the probe's JSON body beside status and detail (e.g. which buckets a replica holds). */
export type CheckResult = boolean | { ok: boolean; detail?: string; info?: Record<string, unknown> };
export type Check = () => CheckResult | Promise<CheckResult>;

export interface OpsServerOptions {
  port: number;
  host?: string;
  log: Logger;
  metrics: Pick<Metrics, "render">;
  checks: {
    /** Liveness: process alive, informers running. */
    healthy: Check;
    /** Readiness: caches synced, holds or awaits buckets. */
    ready: Check;
  };
}

export interface OpsServer {
  /** The bound port (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Serves /healthz, /readyz and /metrics for kubelet probes and Prometheus scrapes. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { log, metrics, checks } = options;
  const opsLog = log.child({ component: "ops-server" });
  // Probes hit this every few seconds: fastify's per-request info lines would drown the
  // controller's logs, so it only gets to say warn and above.
  const app = fastify({
    loggerInstance: opsLog.child({}, { level: atLeastWarn(opsLog) }),
    // no route has a schema: without these fastify would load ajv and fast-json-stringify at
    // start for nothing (about 110 modules and 3-4 MiB of every service's RSS)
    schemaController: {
      compilersFactory: { buildValidator: () => noSchemas, buildSerializer: () => noSchemas },
    },
  });

  app.get("/healthz", async (_req, reply) => probe(reply, checks.healthy));
  app.get("/readyz", async (_req, reply) => probe(reply, checks.ready));
  app.get("/metrics", async (_req, reply) => {
    reply.type(PROMETHEUS_CONTENT_TYPE);
    return metrics.render();
  });

  await app.listen({ port: options.port, host: options.host ?? "0.0.0.0" });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  opsLog.info({ port }, "ops server listening");
  return { port, close: () => app.close() };
}

/** What a route schema would compile to: none of the ops routes has one. */
const noSchemas = (): never => {
  throw new Error("the ops server's routes have no schemas");
};

interface Reply {
  code(status: number): unknown;
}

async function probe(reply: Reply, check: Check): Promise<Record<string, unknown>> {
  let ok: boolean;
  let detail: string | undefined;
  let info: Record<string, unknown> | undefined;
  try {
    const result = await check();
    ok = typeof result === "boolean" ? result : result.ok;
    detail = typeof result === "boolean" ? undefined : result.detail;
    info = typeof result === "boolean" ? undefined : result.info;
  } catch (err) {
    // A check that throws is a failed check, not a 500: the probe semantics stay "not ok".
    ok = false;
    detail = err instanceof Error ? err.message : String(err);
  }
  reply.code(ok ? 200 : 503);
  const body: Record<string, unknown> = { status: ok ? "ok" : "unavailable" };
  if (detail !== undefined) body.detail = detail;
  // status and detail stay what the check decided, whatever info carries
  return { ...info, ...body };
}

function atLeastWarn(log: Logger): string {
  return log.levelVal >= log.levels.values.warn! ? log.level : "warn";
}
