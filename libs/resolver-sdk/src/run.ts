// runResolver: everything around a Resolver. A resolver service's main.ts is
// `await runResolver(new GitResolver(...), { configMap: "git-resolver-config" })`;
// runResolvers hosts several in one process on one work queue. wireResolvers does
// the same wiring onto a runtime without running it, for a process that hosts
// other controllers on that runtime too (services/all-in-one).
import { isDone, LABEL_RESOLVER_TYPE, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import {
  type Controller,
  dropManagedFields,
  dropRequestData,
  ExponentialBackoff,
  Informer,
  isApiError,
  type KubeObject,
  objectKey,
  ServiceRuntime,
} from "@quarry/kube";
import { ChildCaches, type NamespaceInformerFactory } from "./children.ts";
import { defaultRuntimeConfig, type LoadedConfig, parseResolverConfig } from "./config.ts";
import { configKeyWarnings } from "./config-keys.ts";
import { resolverMetrics } from "./metrics.ts";
import { ResolverReconciler } from "./reconciler.ts";
import { type JobResolver, jobTraits, type Resolver } from "./resolver.ts";
import { checkDistinctTypes, RoutingReconciler } from "./routing.ts";
import {
  parseTektonCacheConfig,
  type TektonCacheSettings,
  tektonCacheConfigKeys,
  withTektonCache,
} from "./tekton-cache-config.ts";

export interface RunResolverOptions {
  /**
   * The resolver's ConfigMap, in the service's namespace, watched live. With
   * QUARRY_TEKTON_CONFIG_NAMESPACE set, the ConfigMap of the same name there (Tekton's, which uses
   * the same names) is read in place too, its keys winning.
   */
  configMap: string;
  /** Pass one to register the resolver's own informers first (they join readiness). */
  runtime?: ServiceRuntime;
}

/** One of the resolvers a process hosts (runResolvers). */
export interface HostedResolver {
  resolver: Resolver | JobResolver;
  /** Its ConfigMap, in the service's namespace, watched live. */
  configMap: string;
  /**
   * A source Tekton does not ship (pipe): no ConfigMap of its name exists in Tekton's namespace,
   * nor a Role to read one, so QUARRY_TEKTON_CONFIG_NAMESPACE (process-wide in all-in-one mode)
   * is not read for it.
   */
  notInTekton?: boolean;
}

/** Retries of transient errors: 0.5 s, 1 s, 2 s, 4 s... so a blip is ridden out well inside the global timeout. */
const RETRY_BACKOFF = { baseMs: 500, maxMs: 10_000 };

export function runResolver(
  resolver: Resolver | JobResolver,
  opts: RunResolverOptions,
): Promise<ServiceRuntime> {
  return runResolvers([{ resolver, configMap: opts.configMap }], { runtime: opts.runtime });
}

/**
 * Several resolvers in one process, as Tekton's own resolvers Deployment hosts git, bundles,
 * cluster and hub: one controller, so one work queue and one set of workers (QUARRY_CONCURRENCY)
 * for all of them. Each keeps its ConfigMap, requests informer (its types and aliases, which may
 * not overlap another's), children, memo and metric labels.
 */
export async function runResolvers(
  hosted: readonly HostedResolver[],
  opts: { runtime?: ServiceRuntime } = {},
): Promise<ServiceRuntime> {
  // refused before a runtime exists: a misconfigured process exits without serving anything
  checkHosted(hosted);
  const runtime = opts.runtime ?? new ServiceRuntime(resolversName(hosted));
  wireResolvers(runtime, hosted);
  await runtime.run();
  return runtime;
}

/**
 * runResolvers' wiring on `runtime`, which the caller runs: the resolvers' configs, informers and
 * their one controller (named `<type>+<type>…-resolver`) join whatever else the runtime hosts.
 * Call it once per runtime: its resolver metrics are registered once.
 */
export function wireResolvers(runtime: ServiceRuntime, hosted: readonly HostedResolver[]): Controller {
  checkHosted(hosted);
  const name = resolversName(hosted);
  const metrics = resolverMetrics(runtime.metrics.meter);
  const tektonCache = tektonCacheConfig(runtime, process.env.QUARRY_TEKTON_CACHE_CONFIG);
  const tektonNamespace = process.env.QUARRY_TEKTON_CONFIG_NAMESPACE?.trim();
  const routes = hosted.map(({ resolver, configMap, notInTekton }) => {
    const defaults: LoadedConfig = { runtime: defaultRuntimeConfig, raw: {} };
    const config = runtime.liveConfig(configMap, defaults, (data) => parseResolverConfig(data, resolver), {
      // Tekton's ConfigMap of the same name, read where Tekton keeps it: its keys win over the own one's
      overlays: tektonNamespace && !notInTekton ? [{ namespace: tektonNamespace, name: configMap }] : [],
      warnings: (data) => configKeyWarnings(data, resolver.type, resolver.configKeys),
    });
    const names = [resolver.type, ...(resolver.aliases ?? [])];
    const requests = runtime.informer<ResolutionRequest>(resolutionRequests, {
      labelSelector: `${LABEL_RESOLVER_TYPE} in (${names.join(",")})`,
      // the reconciler asks only whether a request has data; GETs and patches carry the real one
      transform: dropRequestData,
      // under HA by buckets this replica caches and parses only its buckets' requests
      bucketed: true,
    });
    // children live beside their request, so the watched namespaces are the requests' ones
    const children = new ChildCaches(
      jobTraits(resolver).watches,
      (rt, sel) => runtime.informer(rt, sel),
      namespaceInformers(runtime),
    );
    runtime.stopping.addEventListener("abort", () => void children.stop(), { once: true });
    const reconciler = new ResolverReconciler({
      resolver,
      client: runtime.client,
      requests,
      children,
      config: tektonCache
        ? () => withTektonCache(config.current(), tektonCache.current())
        : () => config.current(),
      recorder: runtime.recorder,
      metrics,
      log: runtime.log.child({ controller: `${resolver.type}-resolver` }),
      stopping: runtime.stopping,
    });
    return { requests, children, reconciler };
  });
  const controller = runtime.controller(name, new RoutingReconciler(routes), {
    backoff: new ExponentialBackoff(RETRY_BACKOFF),
  });
  for (const r of routes) wakeUps(r.requests, r.children, controller, r.reconciler);
  return controller;
}

function checkHosted(hosted: readonly HostedResolver[]): void {
  if (hosted.length === 0) throw new Error("runResolvers: no resolver to run");
  checkDistinctTypes(hosted.map((h) => h.resolver));
}

/** The service (and controller) name of a set of hosted resolvers: `git-resolver`, `pipe+git-resolver`. */
const resolversName = (hosted: readonly HostedResolver[]) =>
  `${hosted.map((h) => h.resolver.type).join("+")}-resolver`;

/**
 * Tekton's resolver-cache-config, watched when QUARRY_TEKTON_CACHE_CONFIG names it as
 * "namespace/name" (the charts' tektonCacheConfig value, which also grants the Role to read it):
 * its max-size and ttl size the cache of every resolver whose own ConfigMap leaves cache-size or
 * cache-ttl unset. Unset: not read.
 */
function tektonCacheConfig(runtime: ServiceRuntime, where: string | undefined) {
  const ref = where?.trim();
  if (!ref) return undefined;
  const [namespace, name, ...rest] = ref.split("/");
  if (!namespace || !name || rest.length > 0)
    throw new Error(`QUARRY_TEKTON_CACHE_CONFIG must be "namespace/name", got "${ref}"`);
  const none: TektonCacheSettings = { maxSize: undefined, ttlMs: undefined };
  return runtime.liveConfig(name, none, (data) => parseTektonCacheConfig(data), {
    namespace,
    warnings: (data) => configKeyWarnings(data, "cache", tektonCacheConfigKeys),
  });
}

/**
 * Informers of perNamespace child watches: outside the runtime's readiness (a namespace that never
 * opted in must not make the service unready), stopped by a 403 so the caches make a new one once
 * the namespace opts in.
 */
function namespaceInformers(runtime: ServiceRuntime): NamespaceInformerFactory {
  return (rt, opts) =>
    new Informer<KubeObject>(runtime.client, rt, {
      ...opts,
      watchdogMs: runtime.settings.watchdogMs,
      transform: dropManagedFields,
      stopOn: (err) => isApiError(err, 403),
      log: runtime.log.child({ informer: rt.plural, namespace: opts.namespace }),
    });
}

/** Which events reconcile which request (exported for tests, which wire real informers on a fake client). */
export function wakeUps(
  requests: Pick<Informer<ResolutionRequest>, "on">,
  children: ChildCaches,
  controller: Controller,
  reconciler: Pick<ResolverReconciler, "cancel">,
): void {
  // Status-only updates (the lifecycle controller's conditions, our own writes) must not wake a
  // request waiting out its retry backoff; new requests and spec changes do.
  requests.on(
    controller.handlers({ update: (old, rr) => old.metadata.generation !== rr.metadata.generation }),
  );
  requests.on({
    onUpdate: (_old, rr) => {
      if (isDone(rr.status)) reconciler.cancel(objectKey(rr));
    },
    onDelete: (rr) => reconciler.cancel(objectKey(rr)),
  });
  // any event on a child (its status included) wakes the request that controls it
  children.wake(controller);
}
