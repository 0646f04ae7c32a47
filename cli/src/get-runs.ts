// `quarry get runs`: Tekton's custom-task runs, both flavours (v1alpha1 Run and
// v1beta1 CustomRun) in one kubectl-style table, read through `runView` so the
// table does not care where a flavour keeps its reference.
import {
  type AnyRun,
  CONDITION_SUCCEEDED,
  CUSTOM_RUN_V1BETA1,
  customRuns,
  getCondition,
  RUN_V1ALPHA1,
  type RunFlavour,
  runs,
  runView,
} from "@quarry/api";
import type { KubeClient } from "@quarry/kube";
import { ageSince } from "./age.ts";
import { isUnserved } from "./errors.ts";
import { formatListing, noResourcesFound } from "./listing.ts";

export interface GetRunsOptions {
  /** undefined: all namespaces (adds a NAMESPACE column, like `kubectl get -A`). */
  namespace: string | undefined;
  /** Which flavours to list. */
  flavours: readonly RunFlavour[];
}

const RESOURCE: Readonly<Record<RunFlavour, typeof runs | typeof customRuns>> = {
  Run: runs,
  CustomRun: customRuns,
};

/** "customruns.tekton.dev": how the apiserver and kubectl name a resource. */
export function resourceName(flavour: RunFlavour): string {
  return `${RESOURCE[flavour].plural}.${RESOURCE[flavour].group}`;
}

/**
 * The table for these runs, sorted by namespace, name, then flavour. STARTTIME and
 * COMPLETIONTIME are ages, as Tekton's printer columns (type date) show them; blank until set.
 */
export function formatRuns(items: readonly AnyRun[], now: number, allNamespaces: boolean): string {
  const optionalAge = (ts: string | undefined) => (ts ? ageSince(ts, now) : "");
  return formatListing(
    items,
    {
      headers: ["NAME", "TYPE", "KIND", "SUCCEEDED", "REASON", "STARTTIME", "COMPLETIONTIME", "AGE"],
      cells: (run) => {
        const cond = getCondition(run.status, CONDITION_SUCCEEDED);
        return [
          run.metadata.name ?? "",
          run.kind,
          runView(run).target.kind ?? "",
          cond?.status ?? "",
          cond?.reason ?? "",
          optionalAge(run.status?.startTime),
          optionalAge(run.status?.completionTime),
          ageSince(run.metadata.creationTimestamp, now),
        ];
      },
      sortKey: (run) => `${run.metadata.namespace ?? ""}/${run.metadata.name ?? ""}/${run.kind}`,
    },
    allNamespaces,
  );
}

/**
 * Lists each flavour asked for; a flavour whose CRD this cluster does not serve is skipped
 * (Tekton serves Run only with its v1alpha1 API on), unless no flavour asked for is served.
 */
export async function runGetRuns(
  client: KubeClient,
  opts: GetRunsOptions,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<void> {
  const lists = await Promise.all(
    opts.flavours.map((flavour) =>
      client.list<AnyRun>(RESOURCE[flavour], opts.namespace).then(
        (list) => list.items,
        (e: unknown) => (isUnserved(e) ? undefined : Promise.reject(e)),
      ),
    ),
  );
  if (lists.every((l) => l === undefined)) {
    const names = opts.flavours.map(resourceName);
    throw new Error(`this cluster does not serve ${names.join(" or ")}: is Tekton Pipelines installed?`);
  }
  // the list an item came from names its flavour, whatever the item itself carries
  const items = lists.flatMap((l, i) => (l ?? []).map((item) => withKind(item, opts.flavours[i]!)));
  if (items.length === 0) {
    err(noResourcesFound(opts.namespace));
    return;
  }
  out(formatRuns(items, Date.now(), opts.namespace === undefined));
}

function withKind(item: AnyRun, flavour: RunFlavour): AnyRun {
  return flavour === "CustomRun"
    ? ({ ...item, apiVersion: CUSTOM_RUN_V1BETA1, kind: "CustomRun" } as AnyRun)
    : ({ ...item, apiVersion: RUN_V1ALPHA1, kind: "Run" } as AnyRun);
}
