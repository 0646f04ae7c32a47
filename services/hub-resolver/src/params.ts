// The hub resolver's params, with Tekton's names, filled from the config's
// defaults as Tekton fills them, and their checks. Pure: every refusal is an
// InvalidParams message naming the param, given before anything is fetched.
import { invalidParams, type Params, type ParamsSchema } from "@quarry/resolver-sdk";
import {
  HUB_KINDS,
  HUB_TYPES,
  type HubConfig,
  type HubKind,
  type HubType,
  hubUrlProblem,
  KEYS,
} from "./config.ts";
import { type Constraint, parseConstraint } from "./version-constraint.ts";

export const CATALOG_PARAM = "catalog";
export const TYPE_PARAM = "type";
export const KIND_PARAM = "kind";
export const NAME_PARAM = "name";
export const VERSION_PARAM = "version";
export const URL_PARAM = "url";

// A catalog or name becomes one path segment of the hub's API: no `/`, and no `.` or `..` that a
// URL parser would fold into the path before it.
const segment = { type: "string", maxLength: 253, pattern: "^[A-Za-z0-9_][A-Za-z0-9._-]*$" } as const;

export const paramsSchema: ParamsSchema = {
  type: "object",
  properties: {
    [CATALOG_PARAM]: segment,
    [TYPE_PARAM]: { type: "string", maxLength: 64 },
    [KIND_PARAM]: { type: "string", maxLength: 64 },
    [NAME_PARAM]: segment,
    [VERSION_PARAM]: { type: "string", maxLength: 256 },
    [URL_PARAM]: { type: "string", maxLength: 4096 },
  },
  additionalProperties: false,
};

export interface HubRequest {
  type: HubType;
  kind: HubKind;
  catalog: string;
  name: string;
  /** The `version` param as written: an exact version is a constraint with one `=` term. */
  version: string;
  constraint: readonly Constraint[];
  /** The per-request hub API URL, a trailing `/` dropped; undefined: the configured hubs. */
  url: string | undefined;
}

function str(params: Params, name: string): string | undefined {
  const v = params[name];
  return typeof v === "string" ? v : undefined;
}

/** The request with Tekton's defaults filled in; throws InvalidParams naming the param. */
export function parseRequest(params: Params, config: HubConfig): HubRequest {
  const type = str(params, TYPE_PARAM) ?? config.type;
  if (!(HUB_TYPES as readonly string[]).includes(type))
    throw invalidParams(
      `param "${TYPE_PARAM}" must be ${HUB_TYPES.join(" or ")}; got ${JSON.stringify(type)}`,
    );
  const kind = str(params, KIND_PARAM) ?? config.kind;
  if (!(HUB_KINDS as readonly string[]).includes(kind))
    throw invalidParams(
      `param "${KIND_PARAM}" must be one of: ${HUB_KINDS.join(", ")}; got ${JSON.stringify(kind)}`,
    );
  const missing = [NAME_PARAM, VERSION_PARAM].filter((p) => str(params, p) === undefined);
  if (missing.length > 0) throw invalidParams(`missing required hub resolver params: ${missing.join(", ")}`);
  const name = str(params, NAME_PARAM) as string;
  const version = str(params, VERSION_PARAM) as string;
  const catalog = str(params, CATALOG_PARAM) ?? defaultCatalog(type as HubType, kind as HubKind, config);

  const constraint = parseConstraint(version);
  if ("error" in constraint)
    throw invalidParams(
      `param "${VERSION_PARAM}": ${constraint.error}; expected a version (0.6, 0.6.1) or a go-version constraint (">= 0.5, < 1.0", "~> 0.6")`,
    );

  const rawUrl = str(params, URL_PARAM);
  let url: string | undefined;
  if (rawUrl !== undefined && rawUrl !== "") {
    url = rawUrl.trim().replace(/\/+$/, "");
    const problem = hubUrlProblem(url);
    if (problem) throw invalidParams(`param "${URL_PARAM}": ${problem}`);
  }
  return { type: type as HubType, kind: kind as HubKind, catalog, name, version, constraint, url };
}

/** Tekton's catalog defaults: per kind on Artifact Hub (none for stepaction), one on Tekton Hub. */
function defaultCatalog(type: HubType, kind: HubKind, config: HubConfig): string {
  if (type === "tekton") return config.tektonHubCatalog;
  if (kind === "task") return config.artifactTaskCatalog;
  if (kind === "pipeline") return config.artifactPipelineCatalog;
  throw invalidParams(
    `param "${CATALOG_PARAM}" is required for kind ${kind} on Artifact Hub: ${KEYS.artifactTaskCatalog} and ${KEYS.artifactPipelineCatalog} cover only tasks and pipelines`,
  );
}

/**
 * The version as the hub spells it, from go-version's canonical form: Artifact Hub's
 * `major.minor.patch` (`0.6` → `0.6.0`), Tekton Hub's `major.minor` (`0.6.1` → `0.6`).
 */
export function hubVersion(version: string, type: HubType): string {
  const parts = version.split(".");
  if (type === "artifact" && parts.length === 2) return `${version}.0`;
  if (type === "tekton" && parts.length > 2) return parts.slice(0, 2).join(".");
  return version;
}
