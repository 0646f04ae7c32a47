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
import { type KubeClient, type KubeObject, RestKubeClient } from "./client/client.ts";
import { KubeEventRecorder } from "./client/events.ts";
import type { ResourceType } from "./client/resources.ts";
import { LiveConfig, type LiveConfigOptions } from "./config/config.ts";
import { parseDuration } from "./config/duration.ts";
import { skippedEventsMetric } from "./ha/bucket-metrics.ts";
import { BucketOwnership } from "./ha/bucket-ownership.ts";
import type { BucketSet, BucketStatus } from "./ha/bucket-set.ts";
import { type LeaderElectionSettings, leaderElectionFromEnv } from "./ha/leader-settings.ts";
import { InformerFactory, type InformerRequest } from "./informers/factory.ts";
import type { Informer, KeyFilter } from "./informers/informer.ts";
import { dropManagedFields } from "./informers/transforms.ts";
import { Controller, type Reconciler } from "./queue/controller.ts";
import { workQueueMetrics } from "./queue/queue-metrics.ts";
import { WorkQueue, type WorkQueueMetrics } from "./queue/workqueue.ts";
import type { ExponentialBackoff } from "./time/backoff.ts";

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
  /** One list/watch per resource, however many of this runtime's controllers read it. */
  private readonly informerFactory: InformerFactory;
  /** What readiness waits for and run() starts: the factory's informers and the live configs', each once. */
  private readonly informers: Informer<KubeObject>[] = [];
  /** The informers asked for `bucketed`: they hold only the keys of the buckets admitted here. */
  private readonly bucketedInformers: Informer<KubeObject>[] = [];
  /** One function, so every bucketed reader of a resource shares one informer. */
  private readonly admits: KeyFilter = {
    admits: (key) => this.ownership.admits(key),
    admitsAll: () => this.ownership.admitsAll(),
    labelSelector: () => this.ownership.labelSelector(),
  };
  private readonly stopController = new AbortController();
  /** Aborted when shutdown starts: long operations (fetches) stop so the drain stays short. */
  readonly stopping: AbortSignal = this.stopController.signal;
  private readonly controllers: Controller[] = [];
  private readonly queueMetrics: (controller: string) => WorkQueueMetrics;
  private readonly ownership: BucketOwnership;
  /** The buckets this replica competes for; undefined when leader election is off. */
  readonly buckets: BucketSet | undefined;
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
    this.informerFactory = new InformerFactory(this.client, this.log);
    this.ownership = new BucketOwnership({
      client: this.client,
      namespace: settings.systemNamespace,
      service,
      leaderElection: settings.leaderElection,
      log: this.log,
      meter: this.metrics.meter,
      drainBudgetMs: settings.shutdownTimeoutMs,
      // a filtered cache's gained keys reach its handlers as adds when it refills: no replay
      caches: () => this.informers.filter((i) => !this.bucketedInformers.includes(i)),
      filtered: () => this.bucketedInformers,
      controllers: () => this.controllers,
    });
    this.buckets = this.ownership.buckets;
    skippedEventsMetric(this.metrics.meter, () => this.bucketedInformers);
  }

  /** Whether this replica reconciles `key`: always without leader election, else when it leads the key's bucket. */
  owns(key: string): boolean {
    return this.ownership.owns(key);
  }

  /**
   * Readiness: every informer synced, and, with leader election on, this replica either leads a
   * bucket or is competing (its member Lease was renewed within one lease duration, so it is
   * counted by its peers and takes buckets as they free up). A standby replica is ready: a rolling
   * update must be able to proceed while the old pods still hold every bucket.
   */
  readiness(): { ok: boolean; detail?: string; info?: { buckets: BucketStatus } } {
    const waiting = this.informers.filter((i) => !i.hasSynced()).length;
    const buckets = this.ownership.status();
    const info = buckets && { buckets };
    if (waiting) return { ok: false, detail: `${waiting} informer(s) not synced`, info };
    if (buckets && buckets.held.length === 0 && !buckets.competing)
      return { ok: false, detail: "holds no bucket and cannot reach its Leases", info };
    return { ok: true, info };
  }

  /**
   * The informer of `rt` in the watched namespaces (or `opts.namespace`), shared with every other
   * reader here that asks for the same resource, namespaces, selectors and transform.
   * `bucketed`: the objects' keys are the keys this service's controllers reconcile (a resolver's
   * requests), so under HA by buckets the cache holds only the buckets admitted here and skips
   * other keys' events unparsed. Without leader election it holds every key.
   */
  informer<T extends KubeObject>(
    rt: ResourceType,
    opts: Omit<InformerRequest<T>, "admit"> & { bucketed?: boolean } = {},
  ): Informer<T> {
    const { bucketed, ...request } = opts;
    const filtered = bucketed === true && this.buckets !== undefined;
    const inf = this.informerFactory.informer<T>(rt, {
      namespace: this.settings.watchNamespace,
      watchdogMs: this.settings.watchdogMs,
      // no cache keeps managedFields unless its controller asks (it is most of an object's bytes)
      transform: dropManagedFields,
      ...request,
      ...(filtered && { admit: this.admits }),
    });
    const shared = inf as unknown as Informer<KubeObject>;
    if (!this.informers.includes(shared)) this.informers.push(shared);
    if (filtered && !this.bucketedInformers.includes(shared)) this.bucketedInformers.push(shared);
    return inf;
  }

  /** Resolves once every bucket this replica holds is admitted (tests). */
  bucketsSettled(): Promise<void> {
    return this.ownership.settled();
  }

  liveConfig<T>(
    name: string,
    defaults: T,
    parse: (data: Record<string, string>, defaults: T) => T,
    opts: Pick<LiveConfigOptions<T>, "warnings" | "overlays"> & { namespace?: string } = {},
  ): LiveConfig<T> {
    const cfg = new LiveConfig<T>({
      client: this.client,
      // another namespace's ConfigMap (e.g. one Tekton's users keep in Tekton's) needs a Role there
      namespace: opts.namespace ?? this.settings.systemNamespace,
      name,
      defaults,
      parse,
      overlays: opts.overlays,
      warnings: opts.warnings,
      log: this.log.child({ config: name }),
      recorder: this.recorder,
      watchdogMs: this.settings.watchdogMs,
    });
    for (const i of cfg.informers) this.informers.push(i as unknown as Informer<KubeObject>);
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
      signal: this.stopping,
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
    await this.ownership.start();
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
    await this.ownership.stop();
    await Promise.all(this.informers.map((i) => i.stop()));
    await this.closeServer?.();
    await this.metrics.shutdown();
    // last: the drain's own spans are queued by now; bounded, a collector that is down cannot hold it
    await this.tracing.shutdown();
    this.log.debug("controllers, leases, informers and telemetry stopped");
  }
}
