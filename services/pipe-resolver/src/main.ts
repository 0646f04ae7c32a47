// pipe-resolver: files made by a pipe pod, stored as ConfigMaps and Secrets. Wiring only.
import { clusterPipeStrategies, pipeStrategies, pipes } from "@quarry/api";
import { type KubeObject, RestKubeClient, ServiceRuntime } from "@quarry/kube";
import { runResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { TarPodFileReader } from "./copy.ts";
import { kubeExec } from "./kube-exec.ts";
import { PipeResolver } from "./resolver.ts";
import { cachedLookup } from "./sources.ts";

const runtime = new ServiceRuntime("pipe-resolver");
if (!(runtime.client instanceof RestKubeClient))
  throw new Error("pipe-resolver needs a RestKubeClient (exec)");
const lookup = cachedLookup(runtime.client, {
  // requests are scoped by QUARRY_WATCH_NAMESPACE; Pipes and PipeStrategies live beside them
  Pipe: runtime.informer<KubeObject>(pipes),
  PipeStrategy: runtime.informer<KubeObject>(pipeStrategies),
  ClusterPipeStrategy: runtime.informer<KubeObject>(clusterPipeStrategies, { namespace: undefined }),
});
const resolver = new PipeResolver({
  lookup,
  files: new TarPodFileReader(kubeExec(runtime.client.kubeConfig)),
  self: {
    namespace: runtime.settings.systemNamespace,
    // the chart sets it from the downward API (spec.serviceAccountName)
    serviceAccount: process.env.QUARRY_SERVICE_ACCOUNT || "quarry-pipe-resolver",
  },
});
await runResolver(resolver, { configMap: CONFIG_MAP_NAME, runtime });
