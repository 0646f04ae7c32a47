// `quarry describe`: one ResolutionRequest as a kubectl-describe block, with
// what a person debugging a resolution needs first: who should resolve it,
// with which params, the outcome and why, what came back, and the Events.
import {
  ANNOTATION_CONTENT_TYPE,
  type Condition,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
  type ParamValue,
  type RefSource,
  type ResolutionRequest,
  resolutionRequests,
  resolverTypeOf,
} from "@quarry/api";
import { events, type KubeClient, type KubeObject } from "@quarry/kube";
import { ageSince } from "./age.ts";
import { explainUnserved } from "./errors.ts";
import { formatTable } from "./table.ts";

/** The fields of a core v1 Event that describe prints. */
export interface CoreEvent extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string };
  reportingComponent?: string;
}

/** Lines of resolved data shown before the rest is summarised. */
export const DATA_PREVIEW_LINES = 10;

/** A top-level field: its value on the key's line, more values aligned below it, then indented detail. */
export interface Field {
  key: string;
  values: string[];
  detail: string[];
}

export function describeRequest(rr: ResolutionRequest, evs: readonly CoreEvent[], now: number): string {
  const fields: Field[] = [];
  const field = (key: string, values: string[], detail: string[] = []) =>
    fields.push({ key, values, detail });
  const { metadata: md, spec, status } = rr;

  field("Name", [md.name ?? ""]);
  field("Namespace", [md.namespace ?? ""]);
  field("Labels", orNone(keyValues(md.labels)));
  field("Annotations", orNone(keyValues(md.annotations)));
  field("Created", [when(md.creationTimestamp, now)]);
  field("Resolver", [resolverLine(md.labels)]);
  const params = spec.params ?? [];
  field(
    "Params",
    params.length === 0 ? ["<none>"] : [],
    aligned(params.map((p) => [p.name, paramText(p.value)])),
  );
  if (spec.url) field("URL", [spec.url]);
  const conditions = status?.conditions ?? [];
  field("Conditions", conditions.length === 0 ? ["<none>"] : [], conditionTable(conditions, now));
  const statusAnnotations = keyValues(status?.annotations);
  if (statusAnnotations.length > 0) field("Status Annotations", statusAnnotations);
  const data = dataBlock(status?.data, status?.annotations?.[ANNOTATION_CONTENT_TYPE]);
  field("Data", [data.summary], data.lines);
  const ref = status?.refSource ?? status?.source;
  field("RefSource", ref ? [] : ["<none>"], ref ? refSourceLines(ref) : []);
  field("Events", evs.length === 0 ? ["<none>"] : [], eventTable(evs, now));
  return renderFields(fields);
}

/** The block's text: one value column for the whole block, like kubectl's tabwriter output. */
export function renderFields(fields: readonly Field[]): string {
  const column = Math.max(...fields.map((f) => f.key.length)) + 3;
  const lines: string[] = [];
  for (const f of fields) {
    const [first, ...more] = f.values;
    lines.push(first === undefined ? `${f.key}:` : `${`${f.key}:`.padEnd(column)}${first}`);
    for (const v of more) lines.push(" ".repeat(column) + v);
    lines.push(...f.detail);
  }
  return lines.map((l) => `${l.trimEnd()}\n`).join("");
}

/** Fetches the request and its Events (core v1, matched on the involved object). */
export async function runDescribe(
  client: KubeClient,
  namespace: string,
  name: string,
  out: (s: string) => void,
): Promise<void> {
  const rr = await client
    .get<ResolutionRequest>(resolutionRequests, namespace, name)
    .catch((e: unknown) => Promise.reject(explainUnserved(e)));
  out(describeRequest(rr, await listEvents(client, namespace, "ResolutionRequest", name), Date.now()));
}

/** The core v1 Events about one object, matched on the involved object's kind and name. */
export async function listEvents(
  client: KubeClient,
  namespace: string,
  kind: string,
  name: string,
): Promise<CoreEvent[]> {
  const list = await client.list<CoreEvent>(events, namespace, {
    fieldSelector: `involvedObject.name=${name},involvedObject.kind=${kind}`,
  });
  return list.items;
}

export function orNone(values: string[]): string[] {
  return values.length === 0 ? ["<none>"] : values;
}

export function keyValues(map: Record<string, string> | undefined): string[] {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${map![k]}`);
}

export function when(ts: string | undefined, now: number): string {
  return ts ? `${ts} (${ageSince(ts, now)} ago)` : "<unknown>";
}

function resolverLine(labels: Record<string, string> | undefined): string {
  const { type } = resolverTypeOf(labels);
  if (!type) return `<none> (neither ${LABEL_RESOLVER_TYPE} nor ${LABEL_RESOLVER_ALIAS} is set)`;
  const canonical = labels?.[LABEL_RESOLVER_TYPE];
  // until the lifecycle controller normalises it, say where the type came from
  return canonical === type
    ? type
    : `${type} (from ${LABEL_RESOLVER_ALIAS}=${labels?.[LABEL_RESOLVER_ALIAS]})`;
}

export function paramText(value: ParamValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** "  key:   value" lines with the values aligned. */
export function aligned(pairs: [string, string][]): string[] {
  const w = Math.max(0, ...pairs.map(([k]) => k.length)) + 3;
  return pairs.map(([k, v]) => `  ${`${k}:`.padEnd(w)}${v}`);
}

export function withRule(headers: string[], rows: string[][]): string[] {
  const rule = headers.map((h) => "-".repeat(h.length));
  return formatTable(headers, [rule, ...rows], { indent: "  " })
    .trimEnd()
    .split("\n");
}

export function conditionTable(conditions: readonly Condition[], now: number): string[] {
  if (conditions.length === 0) return [];
  return withRule(
    ["Type", "Status", "Reason", "Last Transition", "Message"],
    conditions.map((c) => [
      c.type,
      c.status,
      c.reason ?? "",
      when(c.lastTransitionTime, now),
      c.message ?? "",
    ]),
  );
}

function dataBlock(
  data: string | undefined,
  contentType: string | undefined,
): { summary: string; lines: string[] } {
  if (!data) return { summary: "<none>", lines: [] };
  const bytes = Buffer.from(data, "base64");
  const summary = `${bytes.length} bytes${contentType ? ` (${contentType})` : ""}`;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { summary: `${summary}, binary`, lines: [] };
  }
  if (text.includes("\u0000")) return { summary: `${summary}, binary`, lines: [] };
  const all = text.replace(/\n$/, "").split("\n");
  const shown = all.slice(0, DATA_PREVIEW_LINES).map((l) => `  ${l}`);
  const rest = all.length - DATA_PREVIEW_LINES;
  if (rest > 0) shown.push(`  ... (${rest} more line${rest === 1 ? "" : "s"})`);
  return { summary, lines: shown };
}

export function refSourceLines(ref: RefSource): string[] {
  const digest = Object.entries(ref.digest ?? {})
    .map(([alg, hex]) => `${alg}:${hex}`)
    .join(", ");
  const pairs: [string, string][] = [
    ["URI", ref.uri],
    ["Digest", digest || "<none>"],
  ];
  if (ref.entryPoint) pairs.push(["Entry Point", ref.entryPoint]);
  return aligned(pairs);
}

export function eventTable(evs: readonly CoreEvent[], now: number): string[] {
  if (evs.length === 0) return [];
  const last = (e: CoreEvent) => e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? "";
  const sorted = [...evs].sort((a, b) => Date.parse(last(a)) - Date.parse(last(b)));
  return withRule(
    ["Type", "Reason", "Age", "From", "Message"],
    sorted.map((e) => {
      const first = e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      // kubectl's wording for a repeated event
      const age =
        (e.count ?? 1) > 1
          ? `${ageSince(last(e), now)} (x${e.count} over ${ageSince(first, now)})`
          : ageSince(first, now);
      return [
        e.type ?? "",
        e.reason ?? "",
        age,
        e.source?.component || e.reportingComponent || "",
        e.message ?? "",
      ];
    }),
  );
}
