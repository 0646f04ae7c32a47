// `quarry describe run`: one Run or CustomRun as a kubectl-describe block. What
// a person debugging a custom task needs: what it runs and how it was asked to,
// its outcome and the chain of reasons behind it (down to the ResolutionRequest
// it created, fetched by name), its attempts, results, provenance and Events.
import {
  ANNOTATION_REASON,
  type AnyRun,
  type ChildReference,
  CONDITION_SUCCEEDED,
  type Condition,
  customRuns,
  DEFAULT_RUN_TIMEOUT_MS,
  getCondition,
  type Param,
  RESOLUTION_REQUEST_KIND,
  type ResolutionRequest,
  type RunFlavour,
  type RunRef,
  type RunStatus,
  refFieldName,
  resolutionRequests,
  runs,
  runView,
  targetName,
} from "@quarry/api";
import { isApiError, type KubeClient } from "@quarry/kube";
import {
  aligned,
  type CoreEvent,
  conditionTable,
  eventTable,
  type Field,
  keyValues,
  listEvents,
  orNone,
  paramText,
  refSourceLines,
  renderFields,
  when,
  withRule,
} from "./describe.ts";
import { explainUnserved, isUnserved, serverMessage } from "./errors.ts";
import { resourceName } from "./get-runs.ts";

/**
 * A ResolutionRequest a run names in status.childReferences, as describe fetched it: the request,
 * or why it could not be read. Only its conditions and status annotations are shown, never its data.
 */
export interface ChildRequest {
  name: string;
  request: ResolutionRequest | undefined;
  /** Why `request` is undefined ("not found", or the apiserver's message). */
  error?: string;
}

export function describeRun(
  run: AnyRun,
  children: readonly ChildRequest[],
  evs: readonly CoreEvent[],
  now: number,
): string {
  const view = runView(run);
  const { metadata: md, spec, status } = run;
  const fields: Field[] = [];
  const field = (key: string, values: string[], detail: string[] = []) =>
    fields.push({ key, values, detail });

  field("Name", [md.name ?? ""]);
  field("Namespace", [md.namespace ?? ""]);
  field("Flavour", [`${view.flavour} (${run.apiVersion})`]);
  field("Labels", orNone(keyValues(md.labels)));
  field("Annotations", orNone(keyValues(md.annotations)));
  field("Created", [when(md.creationTimestamp, now)]);
  field("Target", [targetName(view)]);
  const names = refFieldName(view.flavour);
  if (view.ref) field("Ref", [], refLines(view.ref));
  else if (view.embedded) field("Ref", [`embedded spec (${names.spec})`]);
  else field("Ref", [`<none> (neither ${names.ref} nor ${names.spec} is set)`]);
  field("Params", view.params.length === 0 ? ["<none>"] : [], paramLines(view.params, ""));
  field("Spec Status", [
    spec.status ? `${spec.status}${view.cancelRequested ? " (cancel requested)" : ""}` : "<none>",
  ]);
  if (spec.statusMessage) field("Status Message", [spec.statusMessage]);
  field("Timeout", [timeoutText(spec.timeout)]);
  const attempts = status?.retriesStatus ?? [];
  field("Retries", [`${view.retries}${attempts.length > 0 ? ` (${attempts.length} used)` : ""}`]);
  field("Started", [status?.startTime ? when(status.startTime, now) : "<not yet>"]);
  field("Completed", [status?.completionTime ? when(status.completionTime, now) : "<not yet>"]);
  const succeeded = getCondition(status, CONDITION_SUCCEEDED);
  field("Succeeded", [
    succeeded ? `${succeeded.status}${succeeded.reason ? ` (${succeeded.reason})` : ""}` : "<none>",
  ]);
  field("Reason Chain", [], reasonChain(view.flavour, succeeded, requestsOnly(status, children)));
  const conditions = status?.conditions ?? [];
  field("Conditions", conditions.length === 0 ? ["<none>"] : [], conditionTable(conditions, now));
  const results = status?.results ?? [];
  field(
    "Results",
    results.length === 0 ? ["<none>"] : [],
    aligned(results.map((r) => [r.name, oneLineValue(r.value)])),
  );
  field("Retries Status", attempts.length === 0 ? ["<none>"] : [], attemptTable(attempts));
  const refs = status?.childReferences ?? [];
  field("Child References", refs.length === 0 ? ["<none>"] : [], childTable(refs, children));
  const refSource = status?.provenance?.refSource;
  field("RefSource", refSource ? [] : ["<none>"], refSource ? refSourceLines(refSource) : []);
  field("Events", evs.length === 0 ? ["<none>"] : [], eventTable(evs, now));
  return renderFields(fields);
}

/** A child reference names a ResolutionRequest when its kind says so (any resolution.tekton.dev version). */
export function isRequestReference(ref: ChildReference): boolean {
  return ref.kind === RESOLUTION_REQUEST_KIND && ref.apiVersion.startsWith(`${resolutionRequests.group}/`);
}

/**
 * Finds the run (a CustomRun of that name first, then a Run, unless `flavour` picks one),
 * the ResolutionRequests it names as children, and its Events; prints the block.
 */
export async function runDescribeRun(
  client: KubeClient,
  namespace: string,
  name: string,
  flavour: RunFlavour | undefined,
  out: (s: string) => void,
): Promise<void> {
  const run = await findRun(client, namespace, name, flavour);
  const children = await Promise.all(
    (run.status?.childReferences ?? [])
      .filter(isRequestReference)
      .map((ref) => fetchChildRequest(client, namespace, ref.name)),
  );
  const evs = await listEvents(client, namespace, run.kind, name);
  out(describeRun(run, children, evs, Date.now()));
}

async function findRun(
  client: KubeClient,
  namespace: string,
  name: string,
  flavour: RunFlavour | undefined,
): Promise<AnyRun> {
  const tekton = { hint: "is Tekton Pipelines installed?" };
  if (flavour !== undefined) {
    const rt = flavour === "CustomRun" ? customRuns : runs;
    return client
      .get<AnyRun>(rt, namespace, name)
      .catch((e: unknown) => Promise.reject(explainUnserved(e, { what: resourceName(flavour), ...tekton })));
  }
  const errors: unknown[] = [];
  for (const rt of [customRuns, runs]) {
    try {
      return await client.get<AnyRun>(rt, namespace, name);
    } catch (e) {
      if (!isApiError(e, 404)) throw e;
      errors.push(e);
    }
  }
  if (errors.every(isUnserved)) {
    const what = `${resourceName("CustomRun")} or ${resourceName("Run")}`;
    throw new Error(`this cluster does not serve ${what}: ${tekton.hint}`);
  }
  throw new Error(`no CustomRun or Run named "${name}" in namespace "${namespace}"`);
}

async function fetchChildRequest(client: KubeClient, namespace: string, name: string): Promise<ChildRequest> {
  try {
    const rr = await client.get<ResolutionRequest>(resolutionRequests, namespace, name);
    // describe never shows a request's data; do not keep it around either
    const status = rr.status ? { ...rr.status, data: undefined } : undefined;
    return { name, request: { ...rr, status } };
  } catch (e) {
    if (isApiError(e, 404) && !isUnserved(e)) return { name, request: undefined, error: "not found" };
    return { name, request: undefined, error: serverMessage(explainUnserved(e)) };
  }
}

/** The fetched children that are requests, in the order the run lists them. */
function requestsOnly(status: RunStatus | undefined, children: readonly ChildRequest[]): ChildRequest[] {
  const byName = new Map(children.map((c) => [c.name, c]));
  return (status?.childReferences ?? [])
    .filter(isRequestReference)
    .map((ref) => byName.get(ref.name) ?? { name: ref.name, request: undefined, error: "not fetched" });
}

function refLines(ref: RunRef): string[] {
  const pairs: [string, string][] = [];
  if (ref.apiVersion) pairs.push(["API Version", ref.apiVersion]);
  if (ref.kind) pairs.push(["Kind", ref.kind]);
  if (ref.name) pairs.push(["Name", ref.name]);
  if (ref.bundle) pairs.push(["Bundle", ref.bundle]);
  if (ref.resolver) pairs.push(["Resolver", ref.resolver]);
  const params = ref.params ?? [];
  if (params.length > 0) pairs.push(["Params", ""]);
  return [...aligned(pairs), ...paramLines(params, "  ")];
}

/** Params as aligned "  name:  value" lines, `deeper` indented further (a ref's params sit under "Params:"). */
function paramLines(params: readonly Param[], deeper: string): string[] {
  return aligned(params.map((p) => [p.name, paramText(p.value)])).map((l) => deeper + l);
}

function timeoutText(timeout: string | undefined): string {
  if (timeout === undefined || timeout === "") return `<unset> (default ${DEFAULT_RUN_TIMEOUT_MS / 60_000}m)`;
  // a Go duration of zero ("0", "0s", "0h0m0s") disables the timeout
  return /[1-9]/.test(timeout) ? timeout : `${timeout} (no timeout)`;
}

function oneLineValue(value: string): string {
  return value.includes("\n") ? JSON.stringify(value) : value;
}

/** "failed", "succeeded", "running": the Succeeded condition's status in a word. */
export function stateWord(cond: Condition | undefined): string {
  switch (cond?.status) {
    case "True":
      return "succeeded";
    case "False":
      return "failed";
    case "Unknown":
      return "running";
    default:
      return "pending";
  }
}

/** "Reason (quarry reason): message", leaving out what is unset. */
function because(reason: string | undefined, finer: string | undefined, message: string | undefined): string {
  const why = [reason, finer && finer !== reason ? `(${finer})` : undefined].filter(Boolean).join(" ");
  return [why, message].filter(Boolean).join(": ");
}

/**
 * Why the run is where it is, one link per line: the run's Succeeded reason and message, then
 * each ResolutionRequest it created with that request's own reason, Quarry's finer reason and message.
 */
export function reasonChain(
  /** The run's kind as the first link names it: Run, CustomRun, TaskRun, PipelineRun. */
  flavour: string,
  succeeded: Condition | undefined,
  requests: readonly ChildRequest[],
): string[] {
  const head = succeeded
    ? because(succeeded.reason, undefined, succeeded.message)
    : "no Succeeded condition yet";
  const lines = [`  ${flavour} ${stateWord(succeeded)}${head ? `: ${head}` : ""}`];
  for (const child of requests) {
    const who = `${RESOLUTION_REQUEST_KIND} ${child.name}`;
    if (!child.request) {
      lines.push(`  ← ${who}: <${child.error ?? "unknown"}>`);
      continue;
    }
    const cond = getCondition(child.request.status, CONDITION_SUCCEEDED);
    const finer = child.request.status?.annotations?.[ANNOTATION_REASON];
    const why = cond ? because(cond.reason, finer, cond.message) : "no Succeeded condition yet";
    lines.push(`  ← ${who} ${stateWord(cond)}${why ? `: ${why}` : ""}`);
  }
  return lines;
}

function attemptTable(attempts: readonly RunStatus[]): string[] {
  if (attempts.length === 0) return [];
  return withRule(
    ["Attempt", "Status", "Reason", "Start Time", "Completion Time", "Message"],
    attempts.map((a, i) => {
      const cond = getCondition(a, CONDITION_SUCCEEDED);
      return [
        String(i + 1),
        cond?.status ?? "",
        cond?.reason ?? "",
        a.startTime ?? "",
        a.completionTime ?? "",
        cond?.message ?? "",
      ];
    }),
  );
}

function childTable(refs: readonly ChildReference[], children: readonly ChildRequest[]): string[] {
  if (refs.length === 0) return [];
  const byName = new Map(children.map((c) => [c.name, c]));
  return withRule(
    ["API Version", "Kind", "Name", "Pipeline Task", "Outcome"],
    refs.map((ref) => [
      ref.apiVersion,
      ref.kind,
      ref.name,
      ref.pipelineTaskName ?? "",
      isRequestReference(ref) ? requestOutcome(byName.get(ref.name)) : "",
    ]),
  );
}

/** "False ResolutionFailed (NotFound)": the request's Succeeded status, reason and Quarry's finer reason. */
export function requestOutcome(child: ChildRequest | undefined): string {
  if (!child?.request) return `<${child?.error ?? "not fetched"}>`;
  const cond = getCondition(child.request.status, CONDITION_SUCCEEDED);
  if (!cond) return "<no Succeeded condition>";
  const finer = child.request.status?.annotations?.[ANNOTATION_REASON];
  return [cond.status, because(cond.reason, finer, undefined)].filter(Boolean).join(" ");
}
