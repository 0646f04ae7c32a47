// `quarry describe taskrun|pipelinerun NAME`: one of Tekton's own runs and
// what is behind it, found by owner references (Tekton's reconciler owns the
// ResolutionRequests it creates for a taskRef or pipelineRef, and a
// PipelineRun owns its TaskRuns and CustomRuns): the run's ref and outcome,
// the chain of reasons down to the requests, every request with its outcome,
// the child runs, and the run's Events.
import {
  type AnyRun,
  CONDITION_SUCCEEDED,
  type Condition,
  customRuns,
  getCondition,
  LABEL_RESOLVER_TYPE,
  type Param,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import type { KubeClient, KubeObject, ResourceType } from "@quarry/kube";
import { ageSince } from "./age.ts";
import type { TektonRunKind } from "./args.ts";
import {
  aligned,
  type CoreEvent,
  eventTable,
  type Field,
  keyValues,
  listEvents,
  orNone,
  paramText,
  renderFields,
  when,
  withRule,
} from "./describe.ts";
import { type ChildRequest, reasonChain, requestOutcome } from "./describe-run.ts";
import { explainUnserved, isUnserved } from "./errors.ts";

/** A TaskRun or PipelineRun (tekton.dev/v1), the fields describe reads. */
export interface TektonRun extends KubeObject {
  spec?: {
    taskRef?: TektonRef;
    pipelineRef?: TektonRef;
    params?: Param[];
    timeout?: string;
  };
  status?: {
    conditions?: Condition[];
    startTime?: string;
    completionTime?: string;
  };
}

interface TektonRef {
  name?: string;
  kind?: string;
  resolver?: string;
  params?: Param[];
}

export const TEKTON_RESOURCES: Readonly<Record<TektonRunKind, ResourceType>> = {
  TaskRun: { group: "tekton.dev", version: "v1", plural: "taskruns", kind: "TaskRun", namespaced: true },
  PipelineRun: {
    group: "tekton.dev",
    version: "v1",
    plural: "pipelineruns",
    kind: "PipelineRun",
    namespaced: true,
  },
};

/** What a PipelineRun runs beside TaskRuns: custom tasks, as v1beta1 CustomRuns. */
type ChildRun = TektonRun | AnyRun;

/** Everything found behind one run: its requests, its child runs and theirs. */
export interface RunTree {
  run: TektonRun;
  /** Requests owned by the run itself. */
  requests: ResolutionRequest[];
  children: { run: ChildRun; requests: ResolutionRequest[] }[];
}

/** Objects owned (ownerReferences, by uid) by `owner`. */
export function ownedBy<T extends KubeObject>(items: readonly T[], owner: KubeObject): T[] {
  const uid = owner.metadata.uid;
  if (!uid) return [];
  return items.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === uid));
}

/** The run tree from everything listed in the run's namespace. */
export function runTree(
  run: TektonRun,
  requests: readonly ResolutionRequest[],
  runsInNamespace: readonly ChildRun[],
): RunTree {
  const children = ownedBy(runsInNamespace, run).map((child) => ({
    run: child,
    requests: ownedBy(requests, child),
  }));
  return { run, requests: ownedBy(requests, run), children };
}

export function describeTektonRun(tree: RunTree, evs: readonly CoreEvent[], now: number): string {
  const { run } = tree;
  const { metadata: md } = run;
  const fields: Field[] = [];
  const field = (key: string, values: string[], detail: string[] = []) =>
    fields.push({ key, values, detail });
  field("Name", [md.name ?? ""]);
  field("Namespace", [md.namespace ?? ""]);
  field("Kind", [`${run.kind ?? ""} (${run.apiVersion ?? ""})`]);
  field("Labels", orNone(keyValues(md.labels)));
  field("Created", [when(md.creationTimestamp, now)]);
  const ref = run.spec?.taskRef ?? run.spec?.pipelineRef;
  field("Ref", ref ? [] : ["<none> (embedded spec)"], ref ? refLines(ref) : []);
  const params = run.spec?.params ?? [];
  field(
    "Params",
    params.length === 0 ? ["<none>"] : [],
    aligned(params.map((p) => [p.name, paramText(p.value)])),
  );
  field("Started", [run.status?.startTime ? when(run.status.startTime, now) : "<not yet>"]);
  field("Completed", [run.status?.completionTime ? when(run.status.completionTime, now) : "<not yet>"]);
  const succeeded = getCondition(run.status, CONDITION_SUCCEEDED);
  field("Succeeded", [
    succeeded ? `${succeeded.status}${succeeded.reason ? ` (${succeeded.reason})` : ""}` : "<none>",
  ]);
  const all = [
    ...tree.requests.map((request) => ({ owner: run, request })),
    ...tree.children.flatMap((c) => c.requests.map((request) => ({ owner: c.run, request }))),
  ];
  field(
    "Reason Chain",
    [],
    reasonChain(run.kind ?? "", succeeded, tree.requests.map(asChild)).concat(
      tree.children.flatMap((c) => childChain(c.run, c.requests)),
    ),
  );
  field(
    "Resolution Requests",
    all.length === 0 ? ["<none>"] : [],
    all.length === 0
      ? []
      : withRule(
          ["Owner", "Name", "Resolver", "Outcome", "Age", "Message"],
          all.map(({ owner, request }) => [
            `${owner.kind}/${owner.metadata.name}`,
            request.metadata.name ?? "",
            request.metadata.labels?.[LABEL_RESOLVER_TYPE] ?? "",
            requestOutcome(asChild(request)),
            ageSince(request.metadata.creationTimestamp, now),
            getCondition(request.status, CONDITION_SUCCEEDED)?.message ?? "",
          ]),
        ),
  );
  if (run.kind === "PipelineRun") {
    const kids = tree.children;
    field(
      "Child Runs",
      kids.length === 0 ? ["<none>"] : [],
      kids.length === 0
        ? []
        : withRule(
            ["Kind", "Name", "Pipeline Task", "Succeeded", "Reason", "Requests"],
            kids.map(({ run: child, requests }) => {
              const cond = getCondition(child.status, CONDITION_SUCCEEDED);
              return [
                child.kind ?? "",
                child.metadata.name ?? "",
                child.metadata.labels?.["tekton.dev/pipelineTask"] ?? "",
                cond?.status ?? "",
                cond?.reason ?? "",
                String(requests.length),
              ];
            }),
          ),
    );
  }
  field("Events", evs.length === 0 ? ["<none>"] : [], eventTable(evs, now));
  return renderFields(fields);
}

function asChild(request: ResolutionRequest): ChildRequest {
  return { name: request.metadata.name ?? "", request };
}

/** A child run's links in the chain, only when it did not succeed (a healthy child explains nothing). */
function childChain(child: ChildRun, requests: readonly ResolutionRequest[]): string[] {
  const cond = getCondition(child.status, CONDITION_SUCCEEDED);
  if (cond?.status === "True") return [];
  return reasonChain(`${child.kind} ${child.metadata.name}`, cond, requests.map(asChild)).map((line, i) =>
    i === 0 ? line.replace(/^ {2}/, "  ← ") : `  ${line}`,
  );
}

function refLines(ref: TektonRef): string[] {
  const pairs: [string, string][] = [];
  if (ref.kind) pairs.push(["Kind", ref.kind]);
  if (ref.name) pairs.push(["Name", ref.name]);
  if (ref.resolver) pairs.push(["Resolver", ref.resolver]);
  const params = ref.params ?? [];
  if (params.length > 0) pairs.push(["Params", ""]);
  return [
    ...aligned(pairs),
    ...aligned(params.map((p) => [p.name, paramText(p.value)])).map((l) => `  ${l}`),
  ];
}

/** Fetches the run, lists requests (and for a PipelineRun its child runs) in its namespace, prints the block. */
export async function runDescribeTekton(
  client: KubeClient,
  namespace: string,
  kind: TektonRunKind,
  name: string,
  out: (s: string) => void,
): Promise<void> {
  const rt = TEKTON_RESOURCES[kind];
  const what = { what: `${rt.plural}.${rt.group}`, hint: "is Tekton Pipelines installed?" };
  const run = await client
    .get<TektonRun>(rt, namespace, name)
    .catch((e: unknown) => Promise.reject(explainUnserved(e, what)));
  const stamped = { ...run, apiVersion: run.apiVersion ?? `${rt.group}/${rt.version}`, kind };
  const [requests, children] = await Promise.all([
    client
      .list<ResolutionRequest>(resolutionRequests, namespace)
      .then((l) => l.items)
      .catch((e: unknown) => Promise.reject(explainUnserved(e))),
    kind === "PipelineRun" ? childRuns(client, namespace) : Promise.resolve([]),
  ]);
  const evs = await listEvents(client, namespace, kind, name);
  out(describeTektonRun(runTree(stamped, requests, children), evs, Date.now()));
}

/** TaskRuns and CustomRuns in the namespace (a kind this cluster does not serve is none). */
async function childRuns(client: KubeClient, namespace: string): Promise<ChildRun[]> {
  const listed = await Promise.all(
    [TEKTON_RESOURCES.TaskRun, customRuns].map((rt) =>
      client.list<ChildRun>(rt, namespace).then(
        (l) =>
          l.items.map((o) => ({ ...o, apiVersion: `${rt.group}/${rt.version}`, kind: rt.kind }) as ChildRun),
        (e: unknown) => (isUnserved(e) ? [] : Promise.reject(e)),
      ),
    ),
  );
  return listed.flat();
}
