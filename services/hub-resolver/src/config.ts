// hubresolver-config (Tekton's ConfigMap name): Tekton's keys (the default
// catalogs, kind and type, the ordered hub URL lists), Quarry's allow-list
// for the per-request `url` param, and the SDK's egress keys (ca-bundle,
// proxy, no-proxy, blocked-networks). A bad value throws ConfigError naming
// the key, so the runtime keeps the last good config. The runtime's own keys
// (resolution-timeout, default-cache-mode, ...) share the ConfigMap.
import { ConfigError } from "@quarry/kube";
import {
  type ConfigKeys,
  EGRESS_KEYS,
  type Egress,
  effectiveEgress,
  parseEgress,
  type ResolverConfig,
} from "@quarry/resolver-sdk";
import { load } from "js-yaml";

export const CONFIG_MAP_NAME = "hubresolver-config";

export const HUB_TYPES = ["artifact", "tekton"] as const;
export type HubType = (typeof HUB_TYPES)[number];
export const HUB_KINDS = ["task", "pipeline", "stepaction"] as const;
export type HubKind = (typeof HUB_KINDS)[number];

export const KEYS = {
  tektonHubCatalog: "default-tekton-hub-catalog",
  artifactTaskCatalog: "default-artifact-hub-task-catalog",
  artifactPipelineCatalog: "default-artifact-hub-pipeline-catalog",
  kind: "default-kind",
  type: "default-type",
  artifactHubUrls: "artifact-hub-urls",
  tektonHubUrls: "tekton-hub-urls",
  allowedUrls: "allowed-hub-urls",
} as const;

/** Every key above (all of Tekton v1.15's hubresolver-config keys, and allowed-hub-urls) and the egress keys. */
export const hubConfigKeys: ConfigKeys = {
  known: [...Object.values(KEYS), ...Object.values(EGRESS_KEYS)],
};

/** The values Tekton's hubresolver-config ships with: what a key left out of the ConfigMap means here. */
export const TEKTON_DEFAULTS = {
  tektonHubCatalog: "Tekton",
  artifactTaskCatalog: "tekton-catalog-tasks",
  artifactPipelineCatalog: "tekton-catalog-pipelines",
  kind: "task" as HubKind,
  type: "artifact" as HubType,
};

/** Tekton's default for ARTIFACT_HUB_API; TEKTON_HUB_API has none. */
export const DEFAULT_ARTIFACT_HUB_API = "https://artifacthub.io";

/** The hub APIs from the Deployment's env (ARTIFACT_HUB_API, TEKTON_HUB_API), read once at start. */
export interface HubEnv {
  artifactHubApi: string | undefined;
  tektonHubApi: string | undefined;
}

export interface HubConfig {
  tektonHubCatalog: string;
  artifactTaskCatalog: string;
  artifactPipelineCatalog: string;
  kind: HubKind;
  type: HubType;
  /** The ordered lists of artifact-hub-urls and tekton-hub-urls; empty when the key is unset. */
  artifactHubUrls: readonly string[];
  tektonHubUrls: readonly string[];
  /**
   * URL prefixes the per-request `url` param may name. Undefined (key unset or empty): any URL
   * the egress policy allows, as Tekton; an empty list (`[]`): the param is refused.
   */
  allowedUrls: readonly string[] | undefined;
  egress: Egress;
}

export function parseHubConfig(data: ResolverConfig): HubConfig {
  return {
    tektonHubCatalog: text(data, KEYS.tektonHubCatalog) ?? TEKTON_DEFAULTS.tektonHubCatalog,
    artifactTaskCatalog: text(data, KEYS.artifactTaskCatalog) ?? TEKTON_DEFAULTS.artifactTaskCatalog,
    artifactPipelineCatalog:
      text(data, KEYS.artifactPipelineCatalog) ?? TEKTON_DEFAULTS.artifactPipelineCatalog,
    kind: oneOf(data, KEYS.kind, HUB_KINDS) ?? TEKTON_DEFAULTS.kind,
    type: oneOf(data, KEYS.type, HUB_TYPES) ?? TEKTON_DEFAULTS.type,
    artifactHubUrls: urlList(data, KEYS.artifactHubUrls) ?? [],
    tektonHubUrls: urlList(data, KEYS.tektonHubUrls) ?? [],
    allowedUrls: urlList(data, KEYS.allowedUrls),
    egress: effectiveEgress(parseEgress(data)),
  };
}

/** The env's hub URLs as Tekton's resolvers binary reads them: a trailing `/` dropped, ARTIFACT_HUB_API defaulted. */
export function hubEnv(env: Readonly<Record<string, string | undefined>>): HubEnv {
  const trim = (v: string | undefined) => (v?.trim() ? v.trim().replace(/\/+$/, "") : undefined);
  return {
    artifactHubApi: trim(env.ARTIFACT_HUB_API) ?? DEFAULT_ARTIFACT_HUB_API,
    tektonHubApi: trim(env.TEKTON_HUB_API),
  };
}

/**
 * The URLs to try for a hub type, in order, as Tekton: the ConfigMap's list, else the env's URL.
 * Empty when neither is set (Tekton ships no Tekton Hub URL).
 */
export function configuredHubUrls(type: HubType, config: HubConfig, env: HubEnv): readonly string[] {
  const listed = type === "artifact" ? config.artifactHubUrls : config.tektonHubUrls;
  if (listed.length > 0) return listed;
  const fromEnv = type === "artifact" ? env.artifactHubApi : env.tektonHubApi;
  return fromEnv ? [fromEnv] : [];
}

function text(data: ResolverConfig, key: string): string | undefined {
  const v = data[key]?.trim();
  return v ? v : undefined;
}

function oneOf<T extends string>(data: ResolverConfig, key: string, allowed: readonly T[]): T | undefined {
  const v = text(data, key);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v))
    throw new ConfigError(key, `must be one of ${allowed.join(", ")}; got ${JSON.stringify(v)}`);
  return v as T;
}

/** A YAML list of absolute http(s) URLs (a trailing `/` dropped, as Tekton), or undefined when the key is unset. */
function urlList(data: ResolverConfig, key: string): string[] | undefined {
  const raw = data[key]?.trim();
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = load(raw);
  } catch (err) {
    throw new ConfigError(key, `not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (!Array.isArray(parsed) || parsed.some((u) => typeof u !== "string"))
    throw new ConfigError(key, `must be a YAML list of URLs (- https://hub.example)`);
  return (parsed as string[]).map((u, i) => {
    const url = u.trim().replace(/\/+$/, "");
    const problem = hubUrlProblem(url);
    if (problem) throw new ConfigError(key, `entry ${i}: ${problem}`);
    return url;
  });
}

/** Why `raw` cannot be a hub API base URL (absolute http(s), no credentials, query or fragment), or undefined. */
export function hubUrlProblem(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `${JSON.stringify(raw)} is not an absolute URL`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return `${JSON.stringify(raw)} is not an http or https URL`;
  if (u.username !== "" || u.password !== "")
    return "must not carry credentials (user@ or user:password@): hub APIs are read anonymously";
  if (u.search !== "" || u.hash !== "" || raw.includes("?") || raw.includes("#"))
    return `${JSON.stringify(raw)} must not have a query or fragment: the API paths are appended to it`;
  return undefined;
}
