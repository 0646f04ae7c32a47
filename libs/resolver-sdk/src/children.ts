// The objects a slow resolver creates for a request (a pod, its ConfigMaps
// and Secrets): one informer per declared resource, indexed by owner uid so a
// resolve step reads the request's children from the cache, and wired so
// that an event on a child enqueues the request that controls it. A watch
// marked perNamespace gets an informer per request namespace instead, made
// on first use, so the resolver reads the resource only where it was granted.
import { resolutionRequests } from "@quarry/api";
import {
  byOwnerUid,
  type Controller,
  type Informer,
  type InformerHandlers,
  type KubeObject,
  type ResourceType,
} from "@quarry/kube";
import type { ChildWatch } from "./resolver.ts";

const OWNER_INDEX = "quarry.dev/owner-uid";

/** Which owners wake a request: the ResolutionRequest a child names as its controller, any version. */
export const REQUEST_OWNER = {
  ownerKind: resolutionRequests.kind,
  ownerGroup: resolutionRequests.group,
} as const;

type ChildInformer = Pick<Informer<KubeObject>, "addIndex" | "byIndex" | "on">;
/** An informer the caches start and stop themselves (not one the runtime runs and counts for readiness). */
type NamespaceInformer = ChildInformer & Pick<Informer<KubeObject>, "start" | "stop" | "isRunning">;

interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

/** Makes the informer for one declared child resource (ServiceRuntime.informer in production). */
export type ChildInformerFactory = (resource: ResourceType, opts: Selectors) => ChildInformer;

/**
 * Makes the informer of a perNamespace watch for one namespace. It must stop itself when its list
 * is refused for lack of access (InformerOptions.stopOn), so the caches can drop it.
 */
export type NamespaceInformerFactory = (
  resource: ResourceType,
  opts: Selectors & { namespace: string },
) => NamespaceInformer;

interface Cache {
  watch: ChildWatch;
  /** One informer over the watched namespaces; undefined for a perNamespace watch. */
  shared?: ChildInformer;
  byNamespace: Map<string, NamespaceInformer>;
}

function resourceId(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}

export class ChildCaches {
  private readonly caches = new Map<string, Cache>();
  private readonly handlers: InformerHandlers<KubeObject>[] = [];
  private readonly namespaced: NamespaceInformerFactory | undefined;
  private stopped = false;

  /**
   * One informer per watch, indexed by owner uid; a resource declared twice is a programming error.
   * Without `namespaced`, a perNamespace watch is watched like any other (one informer).
   */
  constructor(
    watches: readonly ChildWatch[],
    informer: ChildInformerFactory,
    namespaced?: NamespaceInformerFactory,
  ) {
    this.namespaced = namespaced;
    for (const w of watches) {
      const id = resourceId(w.resource);
      if (this.caches.has(id)) throw new Error(`resolver watches ${id} twice`);
      const cache: Cache = { watch: w, byNamespace: new Map() };
      if (!w.perNamespace || !namespaced) {
        cache.shared = informer(w.resource, {
          labelSelector: w.labelSelector,
          fieldSelector: w.fieldSelector,
        });
        cache.shared.addIndex(OWNER_INDEX, byOwnerUid);
      }
      this.caches.set(id, cache);
    }
  }

  /** An event on a child enqueues the request that controls it (status-only or not: children are level). */
  wake(controller: Pick<Controller, "ownerHandlers">): void {
    const h = controller.ownerHandlers<KubeObject>(REQUEST_OWNER);
    this.handlers.push(h);
    for (const c of this.caches.values()) {
      c.shared?.on(h);
      for (const inf of c.byNamespace.values()) inf.on(h);
    }
  }

  /**
   * Cached objects of `resource` in `namespace` (the request's) with an ownerReference to `uid`,
   * sorted by name. A perNamespace watch's first read in a namespace starts its informer and finds
   * nothing yet (its list wakes the requests that own what it finds).
   */
  owned<T extends KubeObject>(resource: ResourceType, uid: string | undefined, namespace?: string): T[] {
    const id = resourceId(resource);
    const cache = this.caches.get(id);
    if (!cache) {
      throw new Error(`ctx.children(${id}): the resolver does not watch ${id}; declare it in its watches`);
    }
    if (!uid) return [];
    const inf = cache.shared ?? this.inNamespace(cache, namespace);
    if (!inf) return [];
    const objs = inf.byIndex(OWNER_INDEX, uid) as T[];
    const name = (o: T) => o.metadata.name ?? "";
    return objs.sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  }

  /** The namespace's informer, made (or made again, after it stopped on a refused list) on demand. */
  private inNamespace(cache: Cache, namespace: string | undefined): NamespaceInformer | undefined {
    if (!namespace || !this.namespaced) return undefined;
    const current = cache.byNamespace.get(namespace);
    if (current?.isRunning() || this.stopped) return current;
    const { resource, labelSelector, fieldSelector } = cache.watch;
    const inf = this.namespaced(resource, { labelSelector, fieldSelector, namespace });
    inf.addIndex(OWNER_INDEX, byOwnerUid);
    for (const h of this.handlers) inf.on(h);
    inf.start();
    cache.byNamespace.set(namespace, inf);
    return inf;
  }

  /** Stops the per-namespace informers (the shared ones are the runtime's). */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.caches.values()].flatMap((c) => [...c.byNamespace.values()]);
    await Promise.all(all.map((inf) => inf.stop()));
  }
}
