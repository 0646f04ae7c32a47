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
  type Tracing,
} from "@quarry/observability";
import type { ExponentialBackoff } from "./backoff.ts";
import { type BucketMetrics, bucketMetrics } from "./bucket-metrics.ts";
import { BucketSet, type BucketStatus } from "./bucket-set.ts";
import { type KubeClient, type KubeObject, RestKubeClient } from "./client.ts";
import { LiveConfig } from "./config.ts";
import { Controller, type Reconciler } from "./controller.ts";
import { parseDuration } from "./duration.ts";
import { KubeEventRecorder } from "./events.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import { type LeaderElectionSettings, leaderElectionFromEnv } from "./leader-settings.ts";
import { workQueueMetrics } from "./queue-metrics.ts";
import type { ResourceType } from "./resources.ts";
import { dropManagedFields } from "./transforms.ts";
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
  /**
   * A watch silent this long (no event, no bookmark) is restarted; the informer's default
   * (5 min) when undefined. QUARRY_WATCH_WATCHDOG, a duration ("90s", "5m").
   */
  watchdogMs?: number;
  /** HA by buckets; off (this replica owns every key) when undefined or not enabled. */
  leaderElection?: LeaderElectionSettings;
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
    watchdogMs: env.QUARRY_WATCH_WATCHDOG ? parseDuration(env.QUARRY_WATCH_WATCHDOG) || undefined : undefined,
    leaderElection: leaderElectionFromEnv(env),
  };
}

export class ServiceRuntime {
  readonly service: string;
  readonly settings: RuntimeSettings;
  readonly log: Logger;
  readonly client: KubeClient;
  readonly metrics: Metrics;
  readonly tracing: Tracing;
  readonly recorder: KubeEventRecorder;
  private readonly informers: Informer<KubeObject>[] = [];
  private readonly stopController = new AbortController();
  /** Aborted when shutdown starts: long operations (fetches) stop so the drain stays short. */
  readonly stopping: AbortSignal = this.stopController.signal;
  private readonly controllers: Controller[] = [];
  private readonly queueMetrics: (controller: string) => WorkQueueMetrics;
  /** The buckets this replica competes for; undefined when leader election is off. */
  readonly buckets: BucketSet | undefined;
  private readonly bucketMetrics: BucketMetrics;
  /** While a gained bucket's keys are replayed: only that bucket's keys are enqueued. */
  private replaying: number | undefined;
  private replayed = 0;
  private closeServer: (() => Promise<void>) | undefined;

  constructor(service: string, settings: RuntimeSettings = settingsFromEnv(), client?: KubeClient) {
    this.service = service;
    this.settings = settings;
    this.log = createLogger({ service });
    this.tracing = setupTracing(service, { log: this.log });
    this.metrics = setupMetrics(service);
    this.client = client ?? RestKubeClient.fromEnvironment();
    this.recorder = new KubeEventRecorder(this.client, service, this.log);
    this.queueMetrics = workQueueMetrics(this.metrics.meter, () => this.controllers);
    const le = settings.leaderElection;
    this.buckets = le?.enabled
      ? new BucketSet({
          client: this.client,
          namespace: settings.systemNamespace,
          service,
          identity: le.identity,
          count: le.buckets,
          timing: le.timing,
          ...(le.ownerConfigMap && { ownerConfigMap: le.ownerConfigMap }),
          log: this.log,
          onGained: (i) => this.promote(i),
          onLost: (i) => this.demote(i),
          drain: (i) => this.drain(i),
        })
      : undefined;
    this.bucketMetrics = bucketMetrics(this.metrics.meter, this.buckets);
  }

  /** Whether this replica reconciles `key`: always without leader election, else when it leads the key's bucket. */
  owns(key: string): boolean {
    const b = this.buckets;
    if (!b) return true;
    if (!b.owns(key)) return false;
    if (this.replaying === undefined) return true;
    if (b.bucketOf(key) !== this.replaying) return false;
    this.replayed++;
    return true;
  }

  /** A gained bucket: every informer hands its cache to its handlers again; only that bucket's keys get in. */
  private promote(index: number): void {
    this.bucketMetrics.gained();
    this.replaying = index;
    this.replayed = 0;
    try {
      for (const i of this.informers) i.replay();
    } finally {
      this.replaying = undefined;
    }
    this.log.info(
      { bucket: this.buckets?.names[index], keys: this.replayed },
      "bucket gained, its keys enqueued",
    );
  }

  /** A lost bucket: its keys leave every queue; reconciles in flight finish (their writes are locked). */
  private demote(index: number): void {
    this.bucketMetrics.lost();
    const inBucket = (key: string) => this.buckets?.bucketOf(key) === index;
    const dropped = this.controllers.reduce((n, c) => n + c.drop(inBucket), 0);
    this.log.info({ bucket: this.buckets?.names[index], dropped }, "bucket lost, its keys dropped");
  }

  /** Work in flight of a bucket being handed over, waited for as long as a SIGTERM drain may take. */
  private async drain(index: number): Promise<void> {
    const inBucket = (key: string) => this.buckets?.bucketOf(key) === index;
    let cancel: NodeJS.Timeout | undefined;
    const budget = new Promise<void>((resolve) => {
      cancel = setTimeout(resolve, this.settings.shutdownTimeoutMs);
    });
    await Promise.race([Promise.all(this.controllers.map((c) => c.idle(inBucket))), budget]);
    clearTimeout(cancel);
  }

  /**
   * Readiness: every informer synced, and, with leader election on, this replica either leads a
   * bucket or is competing (its member Lease was renewed within one lease duration, so it is
   * counted by its peers and takes buckets as they free up). A standby replica is ready: a rolling
   * update must be able to proceed while the old pods still hold every bucket.
   */
  readiness(): { ok: boolean; detail?: string; info?: { buckets: BucketStatus } } {
    const waiting = this.informers.filter((i) => !i.hasSynced()).length;
    const buckets = this.buckets?.status();
    const info = buckets && { buckets };
    if (waiting) return { ok: false, detail: `${waiting} informer(s) not synced`, info };
    if (buckets && buckets.held.length === 0 && !buckets.competing)
      return { ok: false, detail: "holds no bucket and cannot reach its Leases", info };
    return { ok: true, info };
  }

  informer<T extends KubeObject>(rt: ResourceType, opts: Omit<InformerOptions<T>, "log"> = {}): Informer<T> {
    const inf = new Informer<T>(this.client, rt, {
      namespace: this.settings.watchNamespace,
      watchdogMs: this.settings.watchdogMs,
      // no cache keeps managedFields unless its controller asks (it is most of an object's bytes)
      transform: dropManagedFields,
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
      watchdogMs: this.settings.watchdogMs,
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
      owns: (key) => this.owns(key),
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
        ready: () => this.readiness(),
      },
    });
    this.closeServer = () => server.close();
    onShutdown(
      this.log,
      async (signal) => {
        this.log.info({ signal }, "shutting down: draining in-flight work");
        await this.shutdown();
      },
      { timeoutMs: this.settings.shutdownTimeoutMs },
    );
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync()));
    for (const c of this.controllers) c.start();
    // electing after the caches synced: a bucket gained replays a complete cache
    await this.buckets?.start();
    this.log.info(
      {
        opsPort: server.port,
        watchNamespace: this.settings.watchNamespace ?? "*",
        systemNamespace: this.settings.systemNamespace,
        buckets: this.buckets ? this.buckets.count : "off",
        identity: this.buckets?.identity,
      },
      "controllers started",
    );
  }

  /**
   * The graceful stop a SIGTERM runs: no new keys, in-flight reconciles finish, then the Leases
   * are released (after the drain, so no reconcile of a bucket runs once a peer may have taken
   * it), informers and the ops server stop.
   */
  async shutdown(): Promise<void> {
    this.stopController.abort();
    await Promise.all(this.controllers.map((c) => c.stop()));
    await this.buckets?.stop();
    await Promise.all(this.informers.map((i) => i.stop()));
    await this.closeServer?.();
    await this.metrics.shutdown();
    // last: the drain's own spans are queued by now; bounded, a collector that is down cannot hold it
    await this.tracing.shutdown();
    this.log.debug("controllers, leases, informers and telemetry stopped");
  }
}
