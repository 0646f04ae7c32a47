// The lifecycle controller on a service runtime: its config, the requests
// informer, the controller, and the conversion webhook when the env turns it
// on. Used by main.ts and by any process that hosts it beside other controllers.
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import { dropRequestData, type ServiceRuntime } from "@quarry/kube";
import { CONFIG_MAP_NAME, defaultLifecycleConfig, parseLifecycleConfig } from "./config.ts";
import { timedOutCounter } from "./metrics.ts";
import { LifecycleReconciler } from "./reconciler.ts";
import { webhookSettingsFromEnv } from "./webhook/config.ts";
import { runConversionWebhook } from "./webhook/run.ts";

export function wireLifecycleController(runtime: ServiceRuntime): void {
  const config = runtime.liveConfig(CONFIG_MAP_NAME, defaultLifecycleConfig, parseLifecycleConfig);
  const requests = runtime.informer<ResolutionRequest>(resolutionRequests, {
    transform: dropRequestData,
    // under HA by buckets this replica caches and parses only its buckets' requests
    bucketed: true,
  });
  const controller = runtime.controller(
    "lifecycle",
    new LifecycleReconciler({
      client: runtime.client,
      requests,
      config: () => config.current(),
      recorder: runtime.recorder,
      log: runtime.log.child({ controller: "lifecycle" }),
      timedOut: timedOutCounter(runtime.metrics.meter),
    }),
  );
  // New requests wait in the slow lane: under a burst, completing requests whose data has landed
  // goes first, and a request resolved before its first look goes straight to True (one write, no
  // race with the resolver's data write). Initialisation is only a progress marker.
  requests.on(controller.handlers({ addLane: "slow" }));
  // a new timeout moves every pending deadline: re-decide them all
  config.onChange(() => {
    for (const rr of requests.list()) controller.enqueue(`${rr.metadata.namespace}/${rr.metadata.name}`);
  });
  // Serving v1alpha1: the apiserver's ConversionReviews, on their own TLS port (off by default). It
  // runs beside the controllers, whose readiness does not wait for it; it is served until the process exits.
  const webhook = webhookSettingsFromEnv(process.env, runtime.settings.systemNamespace);
  if (webhook)
    runConversionWebhook(webhook, {
      client: runtime.client,
      namespace: runtime.settings.systemNamespace,
      log: runtime.log,
    });
}
