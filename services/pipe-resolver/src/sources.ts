// Where the resolver reads Pipes, PipeStrategies and ClusterPipeStrategies:
// informer caches (no API call per step), with one GET on a cache miss so an
// object created an instant before the request is not reported missing.
import { clusterPipeStrategies, pipeStrategies, pipes } from "@quarry/api";
import { isApiError, type KubeClient, type KubeObject, type ResourceType } from "@quarry/kube";

export type PipeKind = "Pipe" | "PipeStrategy" | "ClusterPipeStrategy";

/** Reads one object; undefined when it does not exist. `namespace` is ignored for ClusterPipeStrategy. */
export type ObjectLookup = (
  kind: PipeKind,
  namespace: string,
  name: string,
  signal: AbortSignal,
) => Promise<KubeObject | undefined>;

export const RESOURCES: Readonly<Record<PipeKind, ResourceType>> = {
  Pipe: pipes,
  PipeStrategy: pipeStrategies,
  ClusterPipeStrategy: clusterPipeStrategies,
};

export interface Cache {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
}

/** Cache first (when there is one for the kind), else one GET; a 404 is undefined. */
export function cachedLookup(client: KubeClient, caches: Partial<Record<PipeKind, Cache>>): ObjectLookup {
  return async (kind, namespace, name, signal) => {
    const rt = RESOURCES[kind];
    const ns = rt.namespaced ? namespace : undefined;
    const hit = caches[kind]?.get(ns, name);
    if (hit) return hit;
    try {
      return await client.get<KubeObject>(rt, ns, name, signal);
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw err;
    }
  };
}
