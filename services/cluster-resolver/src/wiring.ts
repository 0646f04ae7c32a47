// The cluster resolver on a service runtime: the kinds this cluster serves,
// discovered once, each read through an informer of the runtime. Used by
// main.ts and by any process that hosts it beside other controllers.
import {
  apiVersionOf,
  dropApplyMetadata,
  isApiError,
  type KubeObject,
  type ServiceRuntime,
  untilAnswered,
} from "@quarry/kube";
import type { HostedResolver } from "@quarry/resolver-sdk";
import { servedKinds } from "./discovery.ts";
import type { ClusterKind } from "./kinds.ts";
import { ClusterResolver, type ServedKind } from "./resolver.ts";

/** The ConfigMap it reads live, in the system namespace. */
export const CONFIG_MAP_NAME = "cluster-resolver-config";

export async function wireClusterResolver(runtime: ServiceRuntime): Promise<HostedResolver> {
  const served: Partial<Record<ClusterKind, ServedKind>> = {};
  // retried like the informers: an apiserver down or refusing at start delays the service, never crashes it
  const kinds = await untilAnswered("discovery of the served kinds", () => servedKinds(runtime.client), {
    log: runtime.log,
    signal: runtime.stopping,
  });
  for (const [kind, rt] of Object.entries(kinds)) {
    served[kind as ClusterKind] = {
      // QUARRY_WATCH_NAMESPACE scopes requests; what they may read is decided per request by policy
      informer: runtime.informer<KubeObject>(rt, { namespace: undefined, transform: dropApplyMetadata }),
      apiVersion: apiVersionOf(rt),
      plural: rt.plural,
      read: (namespace, name, signal) =>
        runtime.client.get<KubeObject>(rt, namespace, name, signal).catch((err: unknown) => {
          if (isApiError(err, 404)) return undefined;
          throw err;
        }),
    };
  }
  runtime.log.info({ kinds: Object.keys(served) }, "serving kinds");
  return { resolver: new ClusterResolver(served), configMap: CONFIG_MAP_NAME };
}
