// git-resolver-config: Tekton's keys (fetch-timeout, default-url,
// default-revision, and `<configKey>.<key>` sets chosen by the configKey
// param) plus Quarry's policy and cache keys. Values are parsed strictly and a
// bad one throws ConfigError naming the key, so the runtime keeps the last
// good config. Keys this file does not know are left alone: the runtime's own
// keys (resolution-timeout, default-cache-mode, ...) share the ConfigMap.
import {
  ConfigError,
  configDuration,
  configPattern,
  configPatterns,
  parseDuration,
  parseSize,
} from "@quarry/kube";
import {
  BLOCKED_NETWORKS_KEY,
  type BlockedNetworks,
  parseBlockedNetworks,
  parseCaBundle,
  parseProxyUrl,
} from "@quarry/resolver-sdk";
import yaml from "js-yaml";
import {
  CREDENTIAL_BINDINGS_KEY,
  type CredentialBinding,
  parseCredentialBindings,
} from "./policy/credential-binding.ts";
import { INSECURE_HOSTS_KEY, type InsecureHost, parseInsecureHosts } from "./policy/plain-http.ts";

export const CONFIG_MAP_NAME = "git-resolver-config";

/** Settings a `<configKey>.` prefix may override. */
export interface RepoSettings {
  /** Per-attempt deadline for the git work; the runtime's resolution-timeout when unset. */
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
}

export interface GitConfig {
  base: RepoSettings;
  /** Overrides by configKey (Tekton's `<configKey>.<key>`). */
  byConfigKey: ReadonlyMap<string, Partial<RepoSettings>>;
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
  /** Which Secrets' tokens may go to which URLs, besides the Secrets' own annotations (policy/credential-binding.ts). */
  credentialBindings: readonly CredentialBinding[];
  /** Hosts a token may reach over plain http; none by default. */
  insecureHosts: readonly InsecureHost[];
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
} as const;

/** Tekton's keys for its SCM-API mode (repo+org), which Quarry does not implement yet: accepted, unused. */
const TEKTON_API_KEYS: ReadonlySet<string> = new Set([
  "default-org",
  "scm-type",
  "server-url",
  "api-token-secret-name",
  "api-token-secret-key",
  "api-token-secret-namespace",
]);

const PER_CONFIG_KEY: ReadonlySet<string> = new Set([
  KEYS.fetchTimeout,
  KEYS.defaultUrl,
  KEYS.defaultRevision,
  KEYS.proxy,
  KEYS.noProxy,
  KEYS.caBundle,
  KEYS.tokenUsername,
]);

export const defaultRepoSettings: RepoSettings = {
  fetchTimeoutMs: undefined,
  defaultUrl: undefined,
  defaultRevision: "main",
  proxy: undefined,
  noProxy: undefined,
  caBundle: undefined,
  tokenUsername: "git",
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
};

export function parseGitConfig(data: Readonly<Record<string, string>>): GitConfig {
  const base: RepoSettings = { ...defaultRepoSettings };
  const byConfigKey = new Map<string, Partial<RepoSettings>>();
  for (const [key, raw] of Object.entries(data)) {
    const dot = key.indexOf(".");
    if (dot < 0) {
      if (PER_CONFIG_KEY.has(key)) Object.assign(base, repoSetting(key, key, raw));
      continue;
    }
    const prefix = key.slice(0, dot);
    const field = key.slice(dot + 1);
    if (field.includes(".")) throw new ConfigError(key, "expected <configKey>.<key> with a single dot");
    if (TEKTON_API_KEYS.has(field)) continue;
    if (!PER_CONFIG_KEY.has(field)) {
      throw new ConfigError(
        key,
        `${field} cannot be set per configKey (only ${[...PER_CONFIG_KEY].join(", ")})`,
      );
    }
    byConfigKey.set(prefix, { ...byConfigKey.get(prefix), ...repoSetting(key, field, raw) });
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
  };
}

/** The settings for a request's configKey param ("default" or none = the plain keys). */
export function settingsFor(config: GitConfig, configKey: string | undefined): RepoSettings | undefined {
  if (configKey === undefined || configKey === "" || configKey === "default") return config.base;
  const overrides = config.byConfigKey.get(configKey);
  return overrides ? { ...config.base, ...overrides } : undefined;
}

function repoSetting(key: string, field: string, raw: string): Partial<RepoSettings> {
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
    default:
      return {};
  }
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
