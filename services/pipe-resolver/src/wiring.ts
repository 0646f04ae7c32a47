// The pipe resolver on a service runtime: its informers (Pipes and strategies)
// registered there, files copied through exec with the runtime's client. Used
// by main.ts and by any process that hosts it beside other resolvers.
import { clusterPipeStrategies, pipeStrategies, pipes } from "@quarry/api";
import { type KubeObject, RestKubeClient, type ServiceRuntime } from "@quarry/kube";
import type { HostedResolver } from "@quarry/resolver-sdk";
import { CONFIG_MAP_NAME } from "./config.ts";
import { type ExecFn, TarPodFileReader } from "./copy.ts";
import { installationDigestKey } from "./digest.ts";
import { PipeResolver } from "./resolver.ts";
import { cachedLookup } from "./sources.ts";
import { webSocketExec } from "./ws-exec.ts";

/**
 * Exec over our own WebSocket with the client's authentication; @kubernetes/client-node's only
 * when the library read the kubeconfig (exec plugins, auth providers, proxy-url, several files),
 * imported on the first exec.
 */
function podExec(client: RestKubeClient): ExecFn {
  if (!client.readByLibrary) return webSocketExec(client);
  let library: Promise<ExecFn> | undefined;
  return async (target, command, io) => {
    library ??= Promise.all([import("./kube-exec.ts"), client.libraryKubeConfig()]).then(
      ([{ kubeExec }, kc]) => kubeExec(kc),
    );
    return (await library)(target, command, io);
  };
}

export function pipeResolver(runtime: ServiceRuntime): PipeResolver {
  const client = runtime.client;
  if (!(client instanceof RestKubeClient)) throw new Error("pipe-resolver needs a RestKubeClient (exec)");
  const lookup = cachedLookup(client, {
    // requests are scoped by QUARRY_WATCH_NAMESPACE; Pipes and PipeStrategies live beside them
    Pipe: runtime.informer<KubeObject>(pipes),
    PipeStrategy: runtime.informer<KubeObject>(pipeStrategies),
    ClusterPipeStrategy: runtime.informer<KubeObject>(clusterPipeStrategies, { namespace: undefined }),
  });
  return new PipeResolver({
    lookup,
    files: new TarPodFileReader(podExec(client)),
    // Secret <system namespace>/pipe-resolver-digest-key, the one Secret the resolver may read
    digestKey: installationDigestKey(client, runtime.settings.systemNamespace),
    self: {
      namespace: runtime.settings.systemNamespace,
      // the chart sets it from the downward API (spec.serviceAccountName)
      serviceAccount: process.env.QUARRY_SERVICE_ACCOUNT || "quarry-pipe-resolver",
    },
  });
}

/** The pipe resolver with its ConfigMap, as runResolvers and wireResolvers host it. */
export function wirePipeResolver(runtime: ServiceRuntime): HostedResolver {
  return { resolver: pipeResolver(runtime), configMap: CONFIG_MAP_NAME, notInTekton: true };
}
