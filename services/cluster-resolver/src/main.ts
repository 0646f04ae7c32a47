// cluster-resolver: resolves Tasks, Pipelines and StepActions from this cluster.
import {
  apiVersionOf,
  dropApplyMetadata,
  isApiError,
  type KubeObject,
  ServiceRuntime,
  untilAnswered,
} from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { servedKinds } from "./discovery.ts";
import type { ClusterKind } from "./kinds.ts";
import { ClusterResolver, type ServedKind } from "./resolver.ts";

const runtime = new ServiceRuntime("cluster-resolver");
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
await runResolver(new ClusterResolver(served), { configMap: "cluster-resolver-config", runtime });
