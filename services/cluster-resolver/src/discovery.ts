// Which of the Tekton kinds this cluster serves, and at which version, so the
// resolver watches only what exists (an unserved kind fails requests with
// UnsupportedKind instead of keeping the service unready).
import { isApiError, type KubeClient, type ResourceType } from "@quarry/kube";
import { CLUSTER_KINDS, type ClusterKind, KIND_RESOURCES } from "./kinds.ts";

interface ApiResourceList {
  resources: { name: string }[];
}

export async function servedKinds(client: KubeClient): Promise<Partial<Record<ClusterKind, ResourceType>>> {
  const servedByVersion = new Map<string, Set<string>>();
  const plurals = async (groupVersion: string) => {
    let set = servedByVersion.get(groupVersion);
    if (!set) {
      try {
        const list = await client.request<ApiResourceList>("GET", `/apis/${groupVersion}`);
        set = new Set(list.resources.map((r) => r.name));
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
        set = new Set();
      }
      servedByVersion.set(groupVersion, set);
    }
    return set;
  };
  const out: Partial<Record<ClusterKind, ResourceType>> = {};
  for (const kind of CLUSTER_KINDS) {
    for (const rt of KIND_RESOURCES[kind]) {
      if ((await plurals(`${rt.group}/${rt.version}`)).has(rt.plural)) {
        out[kind] = rt;
        break;
      }
    }
  }
  return out;
}
