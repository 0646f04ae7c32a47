// Several resolvers on one controller: one work queue and one set of workers
// for all of them, each request handed to the resolver whose informer holds it.
// Sharing the workers is the point (a process hosting git and pipe serves both
// from QUARRY_CONCURRENCY workers), so a resolver that held a worker while its
// source worked would starve the others: slow ones answer pending() instead.
import type { ResolutionRequest } from "@quarry/api";
import type { Lister, ReconcileContext, ReconcileOutcome, Reconciler } from "@quarry/kube";
import type { Resolver } from "./resolver.ts";

/** One hosted resolver's requests (its own label selector) and the reconciler that drives it. */
export interface ResolverRoute {
  requests: Pick<Lister<ResolutionRequest>, "getByKey">;
  reconciler: Reconciler;
}

/** Hands each key to the route whose cache holds the request; a key none holds (deleted) is done. */
export class RoutingReconciler implements Reconciler {
  private readonly routes: readonly ResolverRoute[];

  constructor(routes: readonly ResolverRoute[]) {
    this.routes = routes;
  }

  reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileOutcome | undefined> {
    const route = this.routes.find((r) => r.requests.getByKey(key) !== undefined);
    return route ? route.reconciler.reconcile(key, ctx) : Promise.resolve(undefined);
  }
}

/**
 * Throws unless every type and alias names one resolver: the label selectors must not overlap, or
 * one request would be in two caches and resolved twice.
 */
export function checkDistinctTypes(resolvers: readonly Pick<Resolver, "type" | "aliases">[]): void {
  const owner = new Map<string, string>();
  for (const r of resolvers) {
    for (const name of new Set([r.type, ...(r.aliases ?? [])])) {
      const other = owner.get(name);
      if (other !== undefined)
        throw new Error(`resolver type or alias "${name}" is served by both ${other} and ${r.type}`);
      owner.set(name, r.type);
    }
  }
}
