// `-o json|yaml|name`: objects as kubectl prints them. One object prints as
// itself, several (or a listing) as a v1 List; `name` prints `kind.group/name`
// lines, the form `kubectl get -o name` gives and `kubectl delete` takes.
import yaml from "js-yaml";

/** An object as the output reads it. */
export interface Printable {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string };
}

export type ObjectFormat = "json" | "yaml" | "name";

/**
 * The text for `items`. `single`: the command named exactly one object, which then prints alone
 * (kubectl prints a List for a listing even when it holds one item).
 */
export function formatObjects(items: readonly Printable[], format: ObjectFormat, single: boolean): string {
  if (format === "name") return items.map((o) => `${qualifiedName(o)}\n`).join("");
  const doc = single && items.length === 1 ? items[0] : { apiVersion: "v1", kind: "List", items };
  return formatDocument(doc, format);
}

/** One document as JSON (two-space indent, like kubectl) or YAML. */
export function formatDocument(doc: unknown, format: "json" | "yaml"): string {
  if (format === "json") return `${JSON.stringify(doc, null, 2)}\n`;
  return yaml.dump(doc, { noRefs: true, lineWidth: -1, sortKeys: false });
}

/** "resolutionrequest.resolution.tekton.dev/git-abc": the lower-case kind, the group, the name. */
export function qualifiedName(o: Printable): string {
  const group = o.apiVersion?.includes("/") ? o.apiVersion.split("/")[0] : "";
  const kind = (o.kind ?? "").toLowerCase();
  return `${group ? `${kind}.${group}` : kind}/${o.metadata.name ?? ""}`;
}

/**
 * One watch event as `-w -o FORMAT` prints it: `name` and JSON one per event, YAML as a
 * document of its own (separated by `---`, as kubectl does).
 */
export function formatWatched(o: Printable, format: ObjectFormat): string {
  if (format === "name") return `${qualifiedName(o)}\n`;
  if (format === "json") return formatDocument(o, "json");
  return `---\n${formatDocument(o, "yaml")}`;
}
