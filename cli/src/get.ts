// `quarry get`: ResolutionRequests as a kubectl-style table, with the CRD's
// printer columns (Succeeded, Reason, Resolver, Age).
import {
  CONDITION_SUCCEEDED,
  getCondition,
  LABEL_RESOLVER_TYPE,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import type { KubeClient } from "@quarry/kube";
import { ageSince } from "./age.ts";
import { explainUnserved } from "./errors.ts";
import { formatListing, noResourcesFound } from "./listing.ts";

export interface GetOptions {
  /** undefined: all namespaces (adds a NAMESPACE column, like `kubectl get -A`). */
  namespace: string | undefined;
}

/** The table for these requests, sorted by namespace then name like kubectl's output. */
export function formatRequests(
  rrs: readonly ResolutionRequest[],
  now: number,
  allNamespaces: boolean,
): string {
  return formatListing(
    rrs,
    {
      headers: ["NAME", "SUCCEEDED", "REASON", "RESOLVER", "AGE"],
      cells: (rr) => {
        const cond = getCondition(rr.status, CONDITION_SUCCEEDED);
        // the canonical label, as the CRD's printer column shows it: an alias not yet normalised shows blank
        return [
          rr.metadata.name ?? "",
          cond?.status ?? "",
          cond?.reason ?? "",
          rr.metadata.labels?.[LABEL_RESOLVER_TYPE] ?? "",
          ageSince(rr.metadata.creationTimestamp, now),
        ];
      },
      // byte order of namespace/name: the order the apiserver (etcd keys) returns them in
      sortKey: (rr) => `${rr.metadata.namespace ?? ""}/${rr.metadata.name ?? ""}`,
    },
    allNamespaces,
  );
}

/** Lists and prints; an empty result is reported on stderr, as kubectl does. */
export async function runGet(
  client: KubeClient,
  opts: GetOptions,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<void> {
  const list = await client
    .list<ResolutionRequest>(resolutionRequests, opts.namespace)
    .catch((e: unknown) => Promise.reject(explainUnserved(e)));
  if (list.items.length === 0) {
    err(noResourcesFound(opts.namespace));
    return;
  }
  out(formatRequests(list.items, Date.now(), opts.namespace === undefined));
}
