// The objects a slow resolver creates for a request (a pod, its ConfigMaps
// and Secrets): one informer per declared resource, indexed by owner uid so a
// resolve step reads the request's children from the cache, and wired so
// that an event on a child enqueues the request that controls it.
import { resolutionRequests } from "@quarry/api";
import { byOwnerUid, type Controller, type Informer, type KubeObject, type ResourceType } from "@quarry/kube";
import type { ChildWatch } from "./resolver.ts";

const OWNER_INDEX = "quarry.dev/owner-uid";

/** Which owners wake a request: the ResolutionRequest a child names as its controller, any version. */
export const REQUEST_OWNER = {
  ownerKind: resolutionRequests.kind,
  ownerGroup: resolutionRequests.group,
} as const;

type ChildInformer = Pick<Informer<KubeObject>, "addIndex" | "byIndex" | "on">;

/** Makes the informer for one declared child resource (ServiceRuntime.informer in production). */
export type ChildInformerFactory = (
  resource: ResourceType,
  opts: { labelSelector?: string; fieldSelector?: string },
) => ChildInformer;

function resourceId(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}

export class ChildCaches {
  private readonly caches = new Map<string, ChildInformer>();

  /** One informer per watch, indexed by owner uid; a resource declared twice is a programming error. */
  constructor(watches: readonly ChildWatch[], informer: ChildInformerFactory) {
    for (const w of watches) {
      const id = resourceId(w.resource);
      if (this.caches.has(id)) throw new Error(`resolver watches ${id} twice`);
      const inf = informer(w.resource, { labelSelector: w.labelSelector, fieldSelector: w.fieldSelector });
      inf.addIndex(OWNER_INDEX, byOwnerUid);
      this.caches.set(id, inf);
    }
  }

  /** An event on a child enqueues the request that controls it (status-only or not: children are level). */
  wake(controller: Pick<Controller, "ownerHandlers">): void {
    for (const inf of this.caches.values()) inf.on(controller.ownerHandlers<KubeObject>(REQUEST_OWNER));
  }

  /** Cached objects of `resource` with an ownerReference to `uid`, sorted by name. */
  owned<T extends KubeObject>(resource: ResourceType, uid: string | undefined): T[] {
    const id = resourceId(resource);
    const cache = this.caches.get(id);
    if (!cache) {
      throw new Error(`ctx.children(${id}): the resolver does not watch ${id}; declare it in its watches`);
    }
    if (!uid) return [];
    const objs = cache.byIndex(OWNER_INDEX, uid) as T[];
    const name = (o: T) => o.metadata.name ?? "";
    return objs.sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  }
}
