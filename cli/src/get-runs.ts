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
import { type ListFlags, type ListSource, runList } from "./list-command.ts";
import { formatListing } from "./listing.ts";

export interface GetRunsOptions extends ListFlags {
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
export function formatRuns(
  items: readonly AnyRun[],
  now: number,
  allNamespaces: boolean,
  wide = false,
): string {
  const optionalAge = (ts: string | undefined) => (ts ? ageSince(ts, now) : "");
  const headers = ["NAME", "TYPE", "KIND", "SUCCEEDED", "REASON", "STARTTIME", "COMPLETIONTIME", "AGE"];
  return formatListing(
    items,
    {
      // wide: what the run asks for (its ref's resolver, or the target's name) and why it is where it is
      headers: wide ? [...headers, "REF", "MESSAGE"] : headers,
      cells: (run) => {
        const cond = getCondition(run.status, CONDITION_SUCCEEDED);
        const cells = [
          run.metadata.name ?? "",
          run.kind,
          runView(run).target.kind ?? "",
          cond?.status ?? "",
          cond?.reason ?? "",
          optionalAge(run.status?.startTime),
          optionalAge(run.status?.completionTime),
          ageSince(run.metadata.creationTimestamp, now),
        ];
        if (!wide) return cells;
        const view = runView(run);
        const ref = view.ref?.resolver ? `${view.ref.resolver} resolver` : (view.ref?.name ?? "embedded");
        return [...cells, ref, cond?.message ?? ""];
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
  signal?: AbortSignal,
): Promise<void> {
  const names = opts.flavours.map(resourceName);
  const sources = opts.flavours.map(
    (flavour): ListSource => ({
      rt: RESOURCE[flavour],
      apiVersion: flavour === "CustomRun" ? CUSTOM_RUN_V1BETA1 : RUN_V1ALPHA1,
      kind: flavour,
      whenUnserved: "skip",
    }),
  );
  const noneServed = new Error(
    `this cluster does not serve ${names.join(" or ")}: is Tekton Pipelines installed?`,
  );
  await runList<AnyRun>(client, sources, opts, formatRuns, {
    out,
    err,
    noneServed,
    ...(signal && { signal }),
  });
}
