// runResolver: everything around a Resolver. A resolver service's main.ts is
// `await runResolver(new GitResolver(...), { configMap: "git-resolver-config" })`.
import { isDone, LABEL_RESOLVER_TYPE, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { type Controller, ExponentialBackoff, type Informer, objectKey, ServiceRuntime } from "@quarry/kube";
import { ChildCaches } from "./children.ts";
import { defaultRuntimeConfig, type LoadedConfig, parseResolverConfig } from "./config.ts";
import { ResolverReconciler } from "./controller.ts";
import { resolverMetrics } from "./metrics.ts";
import type { Resolver } from "./resolver.ts";

export interface RunResolverOptions {
  /** The resolver's ConfigMap, in the service's namespace, watched live. */
  configMap: string;
  /** Pass one to register the resolver's own informers first (they join readiness). */
  runtime?: ServiceRuntime;
}

/** Retries of transient errors: 0.5 s, 1 s, 2 s, 4 s... so a blip is ridden out well inside the global timeout. */
const RETRY_BACKOFF = { baseMs: 500, maxMs: 10_000 };

export async function runResolver(resolver: Resolver, opts: RunResolverOptions): Promise<ServiceRuntime> {
  const runtime = opts.runtime ?? new ServiceRuntime(`${resolver.type}-resolver`);
  const defaults: LoadedConfig = { runtime: defaultRuntimeConfig, raw: {} };
  const config = runtime.liveConfig(opts.configMap, defaults, (data) => parseResolverConfig(data, resolver));
  const names = [resolver.type, ...(resolver.aliases ?? [])];
  const requests = runtime.informer<ResolutionRequest>(resolutionRequests, {
    labelSelector: `${LABEL_RESOLVER_TYPE} in (${names.join(",")})`,
  });
  // children live beside their request, so the watched namespaces are the requests' ones
  const children = new ChildCaches(resolver.watches ?? [], (rt, sel) => runtime.informer(rt, sel));
  const reconciler = new ResolverReconciler({
    resolver,
    client: runtime.client,
    requests,
    children,
    config: () => config.current(),
    recorder: runtime.recorder,
    metrics: resolverMetrics(runtime.metrics.meter),
    log: runtime.log.child({ controller: `${resolver.type}-resolver` }),
    stopping: runtime.stopping,
  });
  const controller = runtime.controller(`${resolver.type}-resolver`, reconciler, {
    backoff: new ExponentialBackoff(RETRY_BACKOFF),
  });
  wakeUps(requests, children, controller, reconciler);
  await runtime.run();
  return runtime;
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
