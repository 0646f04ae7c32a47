// The two hub APIs as Tekton's hub resolver calls them: the endpoint paths
// and the JSON fields it reads. Pure; the fetching is resolver.ts's.
//
// Artifact Hub (package kinds tekton-task, tekton-pipeline, tekton-stepaction):
//   GET {base}/api/v1/packages/tekton-{kind}/{catalog}/{name}            → { available_versions: [{version, prerelease}], ... }
//   GET {base}/api/v1/packages/tekton-{kind}/{catalog}/{name}/{version}  → { data: { manifestRaw }, ... }
// Tekton Hub:
//   GET {base}/v1/resource/{catalog}/{kind}/{name}                       → { data: { versions: [{version}], ... } }
//   GET {base}/v1/resource/{catalog}/{kind}/{name}/{version}/yaml        → { data: { yaml } }
import type { HubKind, HubType } from "./config.ts";
import { parseVersion, type Version } from "./version-constraint.ts";

export const HUB_NAMES: Readonly<Record<HubType, string>> = {
  artifact: "Artifact Hub",
  tekton: "Tekton Hub",
};

export interface HubResource {
  type: HubType;
  kind: HubKind;
  catalog: string;
  name: string;
}

const seg = encodeURIComponent;

/** Where the hub lists the resource's versions. */
export function versionsUrl(base: string, r: HubResource): string {
  return r.type === "artifact"
    ? `${base}/api/v1/packages/tekton-${r.kind}/${seg(r.catalog)}/${seg(r.name)}`
    : `${base}/v1/resource/${seg(r.catalog)}/${r.kind}/${seg(r.name)}`;
}

/** Where the hub serves the resource's YAML at one version (spelled as that hub spells it). */
export function resourceUrl(base: string, r: HubResource, version: string): string {
  return r.type === "artifact"
    ? `${base}/api/v1/packages/tekton-${r.kind}/${seg(r.catalog)}/${seg(r.name)}/${seg(version)}`
    : `${base}/v1/resource/${seg(r.catalog)}/${r.kind}/${seg(r.name)}/${seg(version)}/yaml`;
}

export interface ListedVersion {
  /** The hub's spelling. */
  text: string;
  version: Version;
}

export type Parsed<T> = { ok: T } | { error: string };

/**
 * The versions a listing offers, as Tekton reads them: Artifact Hub's `available_versions` without
 * those flagged `prerelease`, Tekton Hub's `data.versions`. An entry that is no version is left
 * out and reported in `skipped` (Tekton fails the whole request on it).
 */
export function listedVersions(
  type: HubType,
  body: unknown,
): Parsed<{ versions: ListedVersion[]; skipped: string[] }> {
  const entries =
    type === "artifact" ? field(body, "available_versions") : field(field(body, "data"), "versions");
  if (!Array.isArray(entries))
    return {
      error:
        type === "artifact"
          ? "the answer has no available_versions list"
          : "the answer has no data.versions list",
    };
  const versions: ListedVersion[] = [];
  const skipped: string[] = [];
  for (const e of entries) {
    const text = field(e, "version");
    if (typeof text !== "string") {
      skipped.push(JSON.stringify(text ?? null));
      continue;
    }
    if (type === "artifact" && field(e, "prerelease") === true) continue;
    const version = parseVersion(text);
    if ("error" in version) skipped.push(text);
    else versions.push({ text, version });
  }
  return { ok: { versions, skipped } };
}

/** The resource's YAML from the hub's answer: Artifact Hub's `data.manifestRaw`, Tekton Hub's `data.yaml`. */
export function manifestOf(type: HubType, body: unknown): Parsed<string> {
  const name = type === "artifact" ? "manifestRaw" : "yaml";
  const yaml = field(field(body, "data"), name);
  if (typeof yaml !== "string" || yaml.trim() === "")
    return { error: `the answer has no data.${name} (the resource's YAML)` };
  return { ok: yaml };
}

function field(v: unknown, name: string): unknown {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)[name]
    : undefined;
}
