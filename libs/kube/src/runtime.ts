// Everything a Quarry service's main.ts wires, in one place: client, logs,
// metrics, tracing, Events, informers, live config, controllers, the ops
// server and graceful shutdown. main.ts only declares what to watch and which
// reconcilers to run.
import { existsSync, readFileSync } from "node:fs";
import {
  createLogger,
  type Logger,
  type Metrics,
  onShutdown,
  setupMetrics,
  setupTracing,
  startOpsServer,
} from "@quarry/observability";
import type { ExponentialBackoff } from "./backoff.ts";
import { type KubeClient, type KubeObject, RestKubeClient } from "./client.ts";
import { LiveConfig } from "./config.ts";
import { Controller, type Reconciler } from "./controller.ts";
import { KubeEventRecorder } from "./events.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import { workQueueMetrics } from "./queue-metrics.ts";
import type { ResourceType } from "./resources.ts";
import { WorkQueue, type WorkQueueMetrics } from "./workqueue.ts";

const SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

export interface RuntimeSettings {
  /** Where the service's own ConfigMap and Events live. */
  systemNamespace: string;
  /** Restrict watches to one namespace (namespace-scoped installs, tests); all when undefined. */
  watchNamespace: string | undefined;
  opsPort: number;
  opsHost: string;
  concurrency: number;
  shutdownTimeoutMs: number;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): RuntimeSettings {
  const saNamespace = existsSync(SA_NAMESPACE_FILE)
    ? readFileSync(SA_NAMESPACE_FILE, "utf8").trim()
    : undefined;
  return {
    systemNamespace: env.QUARRY_SYSTEM_NAMESPACE || saNamespace || "quarry-system",
    watchNamespace: env.QUARRY_WATCH_NAMESPACE || undefined,
    opsPort: Number(env.QUARRY_OPS_PORT ?? 8080),
    opsHost: env.QUARRY_OPS_HOST ?? "0.0.0.0",
    concurrency: Number(env.QUARRY_CONCURRENCY ?? 8),
    shutdownTimeoutMs: Number(env.QUARRY_SHUTDOWN_TIMEOUT_MS ?? 25_000),
  };
}

export class ServiceRuntime {
  readonly service: string;
  readonly settings: RuntimeSettings;
  readonly log: Logger;
  readonly client: KubeClient;
  readonly metrics: Metrics;
  readonly recorder: KubeEventRecorder;
  private readonly informers: Informer<KubeObject>[] = [];
  private readonly stopController = new AbortController();
  /** Aborted when shutdown starts: long operations (fetches) stop so the drain stays short. */
  readonly stopping: AbortSignal = this.stopController.signal;
  private readonly controllers: Controller[] = [];
  private readonly queueMetrics: (controller: string) => WorkQueueMetrics;

  constructor(service: string, settings: RuntimeSettings = settingsFromEnv(), client?: KubeClient) {
    this.service = service;
    this.settings = settings;
    this.log = createLogger({ service });
    setupTracing(service);
    this.metrics = setupMetrics(service);
    this.client = client ?? RestKubeClient.fromEnvironment();
    this.recorder = new KubeEventRecorder(this.client, service, this.log);
    this.queueMetrics = workQueueMetrics(this.metrics.meter, () => this.controllers);
  }

  informer<T extends KubeObject>(rt: ResourceType, opts: Omit<InformerOptions, "log"> = {}): Informer<T> {
    const inf = new Informer<T>(this.client, rt, {
      namespace: this.settings.watchNamespace,
      ...opts,
      log: this.log.child({ informer: rt.plural }),
    });
    this.informers.push(inf as unknown as Informer<KubeObject>);
    return inf;
  }

  liveConfig<T>(
    name: string,
    defaults: T,
    parse: (data: Record<string, string>, defaults: T) => T,
  ): LiveConfig<T> {
    const cfg = new LiveConfig<T>({
      client: this.client,
      namespace: this.settings.systemNamespace,
      name,
      defaults,
      parse,
      log: this.log.child({ config: name }),
      recorder: this.recorder,
    });
    this.informers.push(cfg.informer as unknown as Informer<KubeObject>);
    return cfg;
  }

  controller(
    name: string,
    reconciler: Reconciler,
    opts: { concurrency?: number; backoff?: ExponentialBackoff } = {},
  ): Controller {
    const queue = new WorkQueue({ backoff: opts.backoff, metrics: this.queueMetrics(name) });
    const c = new Controller({
      name,
      reconciler,
      log: this.log,
      concurrency: opts.concurrency ?? this.settings.concurrency,
      queue,
    });
    this.controllers.push(c);
    return c;
  }

  /** Starts everything and resolves once controllers run; SIGTERM drains and exits. */
  async run(): Promise<void> {
    const server = await startOpsServer({
      port: this.settings.opsPort,
      host: this.settings.opsHost,
      log: this.log,
      metrics: this.metrics,
      checks: {
        healthy: () => ({
          ok: this.informers.every((i) => i.isRunning()),
          detail: this.informers.some((i) => !i.isRunning()) ? "an informer stopped" : undefined,
        }),
        ready: () => {
          const waiting = this.informers.filter((i) => !i.hasSynced()).length;
          return { ok: waiting === 0, detail: waiting ? `${waiting} informer(s) not synced` : undefined };
        },
      },
    });
    onShutdown(
      this.log,
      async (signal) => {
        this.log.info({ signal }, "shutting down: draining in-flight work");
        this.stopController.abort();
        await Promise.all(this.controllers.map((c) => c.stop()));
        await Promise.all(this.informers.map((i) => i.stop()));
        await server.close();
        await this.metrics.shutdown();
        this.log.info("shutdown complete");
      },
      { timeoutMs: this.settings.shutdownTimeoutMs },
    );
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync()));
    for (const c of this.controllers) c.start();
    this.log.info(
      {
        opsPort: server.port,
        watchNamespace: this.settings.watchNamespace ?? "*",
        systemNamespace: this.settings.systemNamespace,
      },
      "controllers started",
    );
  }
}
