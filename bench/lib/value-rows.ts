// A benchmark's JSON params from its flags, and its text report declared as rows of a label and a
// part of the JSON result, printed by its shape: a latency summary as its percentiles, a series on one
// line, flat fields as `key: value` on one line, an object with non-empty nested objects as a row per
// field below its label. Shared by the benchmarks that print their JSON result.
import { ms, type Summary, table } from "./stats.ts";

export type ValueRow = readonly [label: string, value: unknown];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === "object" && !Array.isArray(v);
const isSummary = (v: object): v is Summary => "p50" in v && "p99" in v && "count" in v;

const defined = (v: object) => Object.entries(v).filter(([, x]) => x !== undefined);

function line(v: unknown): string {
  if (Array.isArray(v)) return v.map(line).join(typeof v[0] === "string" || isRecord(v[0]) ? "; " : " ");
  if (!isRecord(v)) return String(v);
  if (isSummary(v)) return ms(v);
  return (
    defined(v)
      .map(([k, x]) => `${k}: ${line(x)}`)
      .join(", ") || "none"
  );
}

function rows([label, v]: ValueRow): [string, string][] {
  if (v === undefined) return [];
  const nested = (x: unknown) => isRecord(x) && Object.keys(x).length > 0;
  if (!isRecord(v) || isSummary(v) || !Object.values(v).some(nested)) return [[label, line(v)]];
  const indent = `${/^ */.exec(label)![0]}  `;
  return [[label, ""], ...defined(v).flatMap(([k, x]) => rows([indent + k, x]))];
}

/** The report: the rows as a table, then a markdown table of a line per `row` (cells separated by " | "). */
export const valueReport = (
  spec: readonly ValueRow[],
  header: string,
  row: string | readonly string[],
): string =>
  [
    table(spec.flatMap(rows)),
    "",
    `| ${header} |`,
    `| ${header
      .split(" | ")
      .map(() => "---")
      .join(" | ")} |`,
    ...[row].flat().map((r) => `| ${r} |`),
  ].join("\n");

/** A markdown table's header and lines from columns of a header and each item's cell. */
export function columns<T>(
  cols: readonly (readonly [header: string, cell: (x: T) => unknown])[],
  items: readonly T[],
) {
  return {
    header: cols.map(([h]) => h).join(" | "),
    rows: items.map((x) => cols.map(([, cell]) => cell(x) ?? "").join(" | ")),
  };
}

/** The JSON's params: the flags but the standard ones, camelCased unless `rename`d (e.g. `settle: "settleSeconds"`). */
export function flagParams(flags: Record<string, unknown>, rename: Record<string, string> = {}) {
  const skip = new Set(["deadline", "json", "samples", "logs", "help"]);
  const camel = (k: string) => rename[k] ?? k.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  return Object.fromEntries(Object.entries(flags).flatMap(([k, v]) => (skip.has(k) ? [] : [[camel(k), v]])));
}
