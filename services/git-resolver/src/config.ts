// git-resolver-config: Tekton's keys (fetch-timeout, default-url,
// default-revision, API mode's, backoff-*, and `<configKey>.<key>` sets chosen
// by the configKey param) plus Quarry's policy and cache keys. Values are
// parsed strictly and a bad one throws ConfigError naming the key, so the
// runtime keeps the last good config. Keys this file does not know are left
// alone: the runtime's own keys (resolution-timeout, default-cache-mode, ...)
// share the ConfigMap, and gitConfigKeys lets the runtime report the others.
import {
  ConfigError,
  configDuration,
  configPattern,
  configPatterns,
  parseDuration,
  parseSize,
} from "@quarry/kube";
import {
  BACKOFF_KEYS,
  BLOCKED_NETWORKS_KEY,
  type BlockedNetworks,
  type ConfigKeys,
  CREDENTIAL_BINDINGS_KEY,
  type CredentialBinding,
  INSECURE_HOSTS_KEY,
  type InsecureHost,
  parseBlockedNetworks,
  parseCaBundle,
  parseCredentialBindings,
  parseInsecureHosts,
  parseProxyUrl,
  parseWaitBackoff,
  type WaitBackoff,
} from "@quarry/resolver-sdk";
import yaml from "js-yaml";

export const CONFIG_MAP_NAME = "git-resolver-config";

/**
 * The per-attempt deadline when neither fetch-timeout nor the runtime's resolution-timeout is
 * set: the fetch-timeout Tekton's git-resolver-config ships with.
 */
export const TEKTON_FETCH_TIMEOUT_MS = 60_000;

/** Settings a `<configKey>.` prefix may override. */
export interface RepoSettings {
  /** Per-attempt deadline (Tekton's fetch-timeout); unset: GitResolver.timeout's fallbacks. */
  fetchTimeoutMs: number | undefined;
  defaultUrl: string | undefined;
  defaultRevision: string;
  /** http(s) proxy for git traffic; none when unset. */
  proxy: string | undefined;
  /** Comma-separated hosts that bypass the proxy (curl's no_proxy syntax, plus CIDRs). */
  noProxy: string | undefined;
  /** PEM CAs trusted for the git server (and an https proxy) besides the public roots. */
  caBundle: string | undefined;
  /** Username sent with a gitToken in basic auth (forges ignore it for tokens; Bitbucket wants x-token-auth). */
  tokenUsername: string;
  /** API mode (repo + org): the forge, its address and the operator's token (api-mode/). */
  api: ApiSettings;
}

/** Tekton's keys for API mode. Any scm-type is accepted here; a request refuses one Quarry has no client for. */
export interface ApiSettings {
  /** `org` when a request names `repo` alone. */
  defaultOrg: string | undefined;
  scmType: string | undefined;
  /** The forge the operator's token belongs to; the only place it is ever sent. */
  serverUrl: string | undefined;
  /** The operator's API token: a Secret (name, key) in tokenSecretNamespace, the resolver's namespace when unset. */
  tokenSecretName: string | undefined;
  tokenSecretKey: string | undefined;
  tokenSecretNamespace: string | undefined;
}

/** What one `<configKey>.` set overrides; its api keys one by one. */
export type RepoOverrides = Partial<Omit<RepoSettings, "api">> & { api?: Partial<ApiSettings> };

export interface GitConfig {
  base: RepoSettings;
  /** Overrides by configKey (Tekton's `<configKey>.<key>`). */
  byConfigKey: ReadonlyMap<string, RepoOverrides>;
  /** Full-match regular expressions; empty = every URL. */
  allowedUrls: readonly RegExp[];
  /** Full-match regular expressions over the revision as requested; empty = every revision. */
  allowedRevisions: readonly RegExp[];
  /** Namespace (or "*") → URL patterns; undefined = no per-namespace rules. */
  namespaceUrls: ReadonlyMap<string, readonly RegExp[]> | undefined;
  /** Largest on-disk size of one cached repository (0 = no limit). */
  maxRepositoryBytes: number;
  /** Budget for the whole on-disk cache; least recently used repositories are evicted past it. */
  maxCacheBytes: number;
  /**
   * Under a burst, lookups of one ref by one tenant start at most once per this interval; every
   * request is still answered by a lookup that started after it arrived (0 = back to back).
   */
  refLookupIntervalMs: number;
  /** Networks no git connection goes to (global only: a request picks its configKey). */
  blockedNetworks: BlockedNetworks;
  /** Which Secrets' tokens may go to which URLs, besides the Secrets' own annotations (the SDK's credential-binding.ts). */
  credentialBindings: readonly CredentialBinding[];
  /** Hosts a token may reach over plain http; none by default. */
  insecureHosts: readonly InsecureHost[];
  /**
   * Tekton's backoff-* keys (global only, as Tekton reads them): a request's attempts and the
   * delays between them; unset: the runtime's max-attempts and delays.
   */
  backoff: WaitBackoff | undefined;
}

export const KEYS = {
  fetchTimeout: "fetch-timeout",
  defaultUrl: "default-url",
  defaultRevision: "default-revision",
  proxy: "proxy",
  noProxy: "no-proxy",
  caBundle: "ca-bundle",
  tokenUsername: "git-token-username",
  allowedUrls: "allowed-urls",
  allowedRevisions: "allowed-revisions",
  namespaceUrls: "namespace-allowed-urls",
  maxRepositorySize: "max-repository-size",
  maxCacheSize: "max-cache-size",
  refLookupInterval: "ref-lookup-interval",
  blockedNetworks: BLOCKED_NETWORKS_KEY,
  credentialBindings: CREDENTIAL_BINDINGS_KEY,
  insecureHosts: INSECURE_HOSTS_KEY,
  defaultOrg: "default-org",
  scmType: "scm-type",
  serverUrl: "server-url",
  apiTokenSecretName: "api-token-secret-name",
  apiTokenSecretKey: "api-token-secret-key",
  apiTokenSecretNamespace: "api-token-secret-namespace",
  // backoff-duration, -factor, -jitter, -steps, -cap: Tekton's retry keys (the SDK's wait-backoff.ts)
} as const;

/**
 * Tekton parses git-token (also as `<configKey>.git-token`) into its config and never uses it;
 * Quarry accepts it and reports it as having no effect.
 */
export const TEKTON_UNUSED_KEY = "git-token";

const PER_CONFIG_KEY: ReadonlySet<string> = new Set([
  KEYS.fetchTimeout,
  KEYS.defaultUrl,
  KEYS.defaultRevision,
  KEYS.proxy,
  KEYS.noProxy,
  KEYS.caBundle,
  KEYS.tokenUsername,
  KEYS.defaultOrg,
  KEYS.scmType,
  KEYS.serverUrl,
  KEYS.apiTokenSecretName,
  KEYS.apiTokenSecretKey,
  KEYS.apiTokenSecretNamespace,
]);

/**
 * Every key above and Tekton's backoff keys (the egress keys are among KEYS); `<configKey>.<key>`
 * for the keys a configKey may override. Tekton v1.15's keys are all read, git-token aside.
 */
export const gitConfigKeys: ConfigKeys = {
  known: [
    ...Object.values(KEYS),
    ...Object.values(BACKOFF_KEYS),
    new RegExp(`[^.]+\\.(?:${[...PER_CONFIG_KEY].join("|")})`),
  ],
  tektonOnly: [TEKTON_UNUSED_KEY, new RegExp(`[^.]+\\.${TEKTON_UNUSED_KEY}`)],
};

export const defaultApiSettings: ApiSettings = {
  defaultOrg: undefined,
  scmType: undefined,
  serverUrl: undefined,
  tokenSecretName: undefined,
  tokenSecretKey: undefined,
  tokenSecretNamespace: undefined,
};

export const defaultRepoSettings: RepoSettings = {
  fetchTimeoutMs: undefined,
  defaultUrl: undefined,
  defaultRevision: "main",
  proxy: undefined,
  noProxy: undefined,
  caBundle: undefined,
  tokenUsername: "git",
  api: defaultApiSettings,
};

export const defaultGitConfig: GitConfig = {
  base: defaultRepoSettings,
  byConfigKey: new Map(),
  allowedUrls: [],
  allowedRevisions: [],
  namespaceUrls: undefined,
  maxRepositoryBytes: 512 * 1024 ** 2,
  maxCacheBytes: 2 * 1024 ** 3,
  refLookupIntervalMs: 500,
  blockedNetworks: parseBlockedNetworks(BLOCKED_NETWORKS_KEY, undefined),
  credentialBindings: [],
  insecureHosts: [],
  backoff: undefined,
};

export function parseGitConfig(data: Readonly<Record<string, string>>): GitConfig {
  const base: RepoSettings = { ...defaultRepoSettings };
  const byConfigKey = new Map<string, RepoOverrides>();
  for (const [key, raw] of Object.entries(data)) {
    const dot = key.indexOf(".");
    if (dot < 0) {
      if (!PER_CONFIG_KEY.has(key)) continue;
      const next = repoSetting(key, key, raw);
      Object.assign(base, next, next.api ? { api: { ...base.api, ...next.api } } : {});
      continue;
    }
    const prefix = key.slice(0, dot);
    const field = key.slice(dot + 1);
    if (field.includes(".")) throw new ConfigError(key, "expected <configKey>.<key> with a single dot");
    if (field === TEKTON_UNUSED_KEY) continue;
    if ((Object.values(BACKOFF_KEYS) as string[]).includes(field)) {
      throw new ConfigError(
        key,
        `Tekton's backoff keys apply to every configKey: set ${field} without a prefix`,
      );
    }
    if (!PER_CONFIG_KEY.has(field)) {
      throw new ConfigError(
        key,
        `${field} cannot be set per configKey (only ${[...PER_CONFIG_KEY].join(", ")})`,
      );
    }
    const before = byConfigKey.get(prefix) ?? {};
    const next = repoSetting(key, field, raw);
    // api settings merge field by field, so one configKey may override the server alone
    const api = next.api ? { api: { ...before.api, ...next.api } } : {};
    byConfigKey.set(prefix, { ...before, ...next, ...api });
  }
  return {
    base,
    byConfigKey,
    allowedUrls: configPatterns(KEYS.allowedUrls, data[KEYS.allowedUrls]),
    allowedRevisions: configPatterns(KEYS.allowedRevisions, data[KEYS.allowedRevisions]),
    namespaceUrls: namespaceRules(data[KEYS.namespaceUrls]),
    maxRepositoryBytes:
      size(KEYS.maxRepositorySize, data[KEYS.maxRepositorySize]) ?? defaultGitConfig.maxRepositoryBytes,
    maxCacheBytes: size(KEYS.maxCacheSize, data[KEYS.maxCacheSize]) ?? defaultGitConfig.maxCacheBytes,
    refLookupIntervalMs: interval(KEYS.refLookupInterval, data[KEYS.refLookupInterval]),
    blockedNetworks: parseBlockedNetworks(KEYS.blockedNetworks, data[KEYS.blockedNetworks]),
    credentialBindings: parseCredentialBindings(data[KEYS.credentialBindings]),
    insecureHosts: parseInsecureHosts(data[KEYS.insecureHosts]),
    backoff: parseWaitBackoff(data),
  };
}

/** The settings for a request's configKey param ("default" or none = the plain keys). */
export function settingsFor(config: GitConfig, configKey: string | undefined): RepoSettings | undefined {
  if (configKey === undefined || configKey === "" || configKey === "default") return config.base;
  const overrides = config.byConfigKey.get(configKey);
  return overrides
    ? { ...config.base, ...overrides, api: { ...config.base.api, ...overrides.api } }
    : undefined;
}

function repoSetting(key: string, field: string, raw: string): RepoOverrides {
  const value = raw.trim();
  switch (field) {
    case KEYS.fetchTimeout:
      return { fetchTimeoutMs: value === "" ? undefined : configDuration(key, value) };
    case KEYS.defaultUrl:
      return { defaultUrl: value === "" ? undefined : value };
    case KEYS.defaultRevision:
      return { defaultRevision: value === "" ? defaultRepoSettings.defaultRevision : value };
    case KEYS.proxy:
      return { proxy: value === "" ? undefined : parseProxyUrl(key, value) };
    case KEYS.noProxy:
      return { noProxy: value === "" ? undefined : value };
    case KEYS.caBundle:
      return { caBundle: value === "" ? undefined : parseCaBundle(key, value) };
    case KEYS.tokenUsername:
      if (value.includes(":")) throw new ConfigError(key, 'must not contain ":"');
      return { tokenUsername: value === "" ? defaultRepoSettings.tokenUsername : value };
    case KEYS.defaultOrg:
      return { api: { defaultOrg: orUndefined(value) } };
    case KEYS.scmType:
      return { api: { scmType: orUndefined(value.toLowerCase()) } };
    case KEYS.serverUrl:
      return { api: { serverUrl: value === "" ? undefined : serverUrl(key, value) } };
    case KEYS.apiTokenSecretName:
      return { api: { tokenSecretName: orUndefined(value) } };
    case KEYS.apiTokenSecretKey:
      return { api: { tokenSecretKey: orUndefined(value) } };
    case KEYS.apiTokenSecretNamespace:
      return { api: { tokenSecretNamespace: orUndefined(value) } };
    default:
      return {};
  }
}

const orUndefined = (value: string): string | undefined => (value === "" ? undefined : value);

/** An http(s) URL without credentials, query or fragment; kept without a trailing slash. */
function serverUrl(key: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(key, `not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new ConfigError(key, "must be an http(s) URL");
  if (url.username || url.password) throw new ConfigError(key, "must not contain credentials");
  if (url.search || url.hash) throw new ConfigError(key, "must not contain a query or fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** YAML: namespace (or "*") → one pattern or a list of patterns. */
function namespaceRules(raw: string | undefined): Map<string, RegExp[]> | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const key = KEYS.namespaceUrls;
  let doc: unknown;
  try {
    doc = yaml.load(raw);
  } catch (err) {
    throw new ConfigError(key, `not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(key, "must be a YAML mapping of namespace to URL pattern(s)");
  }
  const rules = new Map<string, RegExp[]>();
  for (const [ns, value] of Object.entries(doc)) {
    const list = typeof value === "string" ? [value] : value;
    if (!Array.isArray(list) || !list.every((v) => typeof v === "string")) {
      throw new ConfigError(key, `namespace ${JSON.stringify(ns)}: expected a pattern or a list of patterns`);
    }
    rules.set(
      ns,
      list.map((p) => configPattern(key, p)),
    );
  }
  return rules;
}

/** A Go duration from 0 to a minute; unset or empty = the default. */
function interval(key: string, raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return defaultGitConfig.refLookupIntervalMs;
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch (err) {
    throw new ConfigError(key, (err as Error).message);
  }
  if (ms > 60_000) throw new ConfigError(key, `must be at most 1m, got "${raw.trim()}"`);
  return ms;
}

function size(key: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = parseSize(raw);
  if (n === undefined) throw new ConfigError(key, `must be a size like 512Mi or 2Gi, got "${raw}"`);
  return n;
}
