// `quarry get`: ResolutionRequests as a kubectl-style table, with the CRD's
// printer columns (Succeeded, Reason, Resolver, Age).
import {
  ANNOTATION_REASON,
  CONDITION_SUCCEEDED,
  getCondition,
  LABEL_RESOLVER_TYPE,
  RESOLUTION_REQUEST_KIND,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import type { KubeClient } from "@quarry/kube";
import { ageSince } from "./age.ts";
import { type ListFlags, type ListSource, runList } from "./list-command.ts";
import { formatListing } from "./listing.ts";

/** `namespace` undefined: all namespaces (adds a NAMESPACE column, like `kubectl get -A`). */
export type GetOptions = ListFlags;

export const REQUEST_SOURCE: ListSource = {
  rt: resolutionRequests,
  apiVersion: `${resolutionRequests.group}/${resolutionRequests.version}`,
  kind: RESOLUTION_REQUEST_KIND,
  whenUnserved: new Error(
    `this cluster does not serve ${resolutionRequests.plural}.${resolutionRequests.group}: is Quarry's API installed?`,
  ),
};

/**
 * The table for these requests, sorted by namespace then name like kubectl's output. `wide` adds
 * Quarry's finer reason (status annotation quarry.dev/reason), the owner and the message.
 */
export function formatRequests(
  rrs: readonly ResolutionRequest[],
  now: number,
  allNamespaces: boolean,
  wide = false,
): string {
  const headers = ["NAME", "SUCCEEDED", "REASON", "RESOLVER", "AGE"];
  return formatListing(
    rrs,
    {
      headers: wide ? [...headers, "QUARRY-REASON", "OWNER", "MESSAGE"] : headers,
      cells: (rr) => {
        const cond = getCondition(rr.status, CONDITION_SUCCEEDED);
        // the canonical label, as the CRD's printer column shows it: an alias not yet normalised shows blank
        const cells = [
          rr.metadata.name ?? "",
          cond?.status ?? "",
          cond?.reason ?? "",
          rr.metadata.labels?.[LABEL_RESOLVER_TYPE] ?? "",
          ageSince(rr.metadata.creationTimestamp, now),
        ];
        if (!wide) return cells;
        const owner = rr.metadata.ownerReferences?.[0];
        return [
          ...cells,
          rr.status?.annotations?.[ANNOTATION_REASON] ?? "",
          owner ? `${owner.kind}/${owner.name}` : "",
          cond?.message ?? "",
        ];
      },
      // byte order of namespace/name: the order the apiserver (etcd keys) returns them in
      sortKey: (rr) => `${rr.metadata.namespace ?? ""}/${rr.metadata.name ?? ""}`,
    },
    allNamespaces,
  );
}

/** Lists (or gets by name) and prints; an empty result is reported on stderr, as kubectl does. */
export async function runGet(
  client: KubeClient,
  opts: GetOptions,
  out: (s: string) => void,
  err: (s: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  await runList<ResolutionRequest>(client, [REQUEST_SOURCE], opts, formatRequests, {
    out,
    err,
    ...(signal && { signal }),
  });
}
