// bundleresolver-config: Tekton's keys (default-kind, default-service-account,
// fetch-timeout, backoff-*) plus Quarry's policy and limits. A bad value throws
// ConfigError naming the key, so the runtime keeps the last good config.
// The runtime's own keys (resolution-timeout, default-cache-mode, ...) share
// the ConfigMap and are left to it.
import { ConfigError, configDuration, configPatterns, parseSize } from "@quarry/kube";
import type { TokenRealmPair } from "@quarry/oci";
import {
  BACKOFF_KEYS,
  type ConfigKeys,
  EGRESS_KEYS,
  type Egress,
  parseEgress,
  parseWaitBackoff,
  type WaitBackoff,
} from "@quarry/resolver-sdk";

export const CONFIG_MAP_NAME = "bundleresolver-config";

export const KEYS = {
  defaultKind: "default-kind",
  defaultServiceAccount: "default-service-account",
  fetchTimeout: "fetch-timeout",
  allowedRepositories: "allowed-repositories",
  insecureRegistries: "insecure-registries",
  tokenRealmHosts: "token-realm-hosts",
  maxLayerSize: "max-layer-size",
  blobCacheSize: "blob-cache-size",
  // ca-bundle, proxy, no-proxy: the SDK's egress keys (libs/resolver-sdk egress.ts)
  // backoff-duration, -factor, -jitter, -steps, -cap: Tekton's retry keys (the SDK's wait-backoff.ts)
} as const;

/** Every key above, Tekton's backoff keys and the egress keys: Tekton v1.15's keys are all read. */
export const bundleConfigKeys: ConfigKeys = {
  known: [...Object.values(KEYS), ...Object.values(BACKOFF_KEYS), ...Object.values(EGRESS_KEYS)],
};

export interface BundleConfig {
  /** Kind looked for when the request names none (Tekton's default: task). */
  defaultKind: string;
  /** Whose imagePullSecrets are used when the request names neither secret nor serviceAccount. */
  defaultServiceAccount: string;
  /** Per-attempt deadline; the runtime's resolution-timeout when unset. */
  fetchTimeoutMs: number | undefined;
  /** Full-match regular expressions over "registry/repository"; empty = every repository. */
  allowedRepositories: readonly RegExp[];
  /** Hosts (host[:port]) reachable over plain HTTP besides loopback. */
  insecureRegistries: ReadonlySet<string>;
  /**
   * registry=realm pairs: token realms a registry's pull credential may be sent to besides its own
   * host and hosts under its parent domain (libs/oci realm-binding.ts).
   */
  tokenRealmHosts: readonly TokenRealmPair[];
  /** Largest layer blob fetched, and largest layer once decompressed. */
  maxLayerBytes: number;
  /** Budget of the digest-addressed manifest and layer cache. */
  blobCacheBytes: number;
  /** Extra CAs, proxy and no-proxy for registry traffic (unset: public roots, the process's proxy env). */
  egress: Partial<Egress>;
  /** The retry schedule from Tekton's backoff-* keys; unset: the runtime's max-attempts and delays. */
  backoff: WaitBackoff | undefined;
}

export const defaultBundleConfig: BundleConfig = {
  defaultKind: "task",
  defaultServiceAccount: "default",
  fetchTimeoutMs: undefined,
  allowedRepositories: [],
  insecureRegistries: new Set(),
  tokenRealmHosts: [],
  maxLayerBytes: 2 * 1024 ** 2,
  blobCacheBytes: 64 * 1024 ** 2,
  egress: {},
  backoff: undefined,
};

export function parseBundleConfig(data: Readonly<Record<string, string>>): BundleConfig {
  const get = (key: string) => {
    const v = data[key]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const kind = get(KEYS.defaultKind);
  if (kind !== undefined && !/^[a-z][a-z0-9]*$/.test(kind)) {
    throw new ConfigError(KEYS.defaultKind, `must be a lower-case singular kind like "task", got "${kind}"`);
  }
  const sa = get(KEYS.defaultServiceAccount);
  if (sa !== undefined && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(sa)) {
    throw new ConfigError(KEYS.defaultServiceAccount, `must be a ServiceAccount name, got "${sa}"`);
  }
  return {
    defaultKind: kind ?? defaultBundleConfig.defaultKind,
    defaultServiceAccount: sa ?? defaultBundleConfig.defaultServiceAccount,
    fetchTimeoutMs: optional(get(KEYS.fetchTimeout), (v) => configDuration(KEYS.fetchTimeout, v)),
    allowedRepositories: configPatterns(KEYS.allowedRepositories, get(KEYS.allowedRepositories)),
    insecureRegistries: new Set(
      (get(KEYS.insecureRegistries) ?? "")
        .split(/[\n,]/)
        .map((h) => h.trim().toLowerCase())
        .filter((h) => h !== "" && !h.startsWith("#")),
    ),
    tokenRealmHosts: tokenRealmHosts(get(KEYS.tokenRealmHosts)),
    maxLayerBytes: size(KEYS.maxLayerSize, get(KEYS.maxLayerSize)) ?? defaultBundleConfig.maxLayerBytes,
    blobCacheBytes: size(KEYS.blobCacheSize, get(KEYS.blobCacheSize)) ?? defaultBundleConfig.blobCacheBytes,
    egress: parseEgress(data),
    backoff: parseWaitBackoff(data),
  };
}

// host[:port]: a DNS name or an address (IPv6 in brackets), nothing else: no scheme, path or wildcard
const HOST_PORT =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

/** "registry=realm-host" entries, comma- or newline-separated; `#` starts a comment line. */
function tokenRealmHosts(value: string | undefined): TokenRealmPair[] {
  const pairs: TokenRealmPair[] = [];
  for (const raw of (value ?? "").split(/[\n,]/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "" || entry.startsWith("#")) continue;
    const sides = entry.split("=").map((s) => s.trim());
    const [registry, realm] = sides;
    if (sides.length !== 2 || !registry || !realm || !isHostPort(registry) || !isHostPort(realm)) {
      throw new ConfigError(
        KEYS.tokenRealmHosts,
        `entry "${raw.trim()}" must be registry=realm-host, each a host[:port] with no scheme or path, e.g. registry.corp.example=sso.corp.example:8443`,
      );
    }
    pairs.push({ registry, realm });
  }
  return pairs;
}

function isHostPort(value: string): boolean {
  const m = HOST_PORT.exec(value);
  return m !== null && (m[1] === undefined || (Number(m[1]) >= 1 && Number(m[1]) <= 65535));
}

function size(key: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = parseSize(value);
  if (n === undefined || n <= 0)
    throw new ConfigError(key, `must be a positive size like 2Mi, got "${value}"`);
  return n;
}

function optional<T>(value: string | undefined, parse: (v: string) => T): T | undefined {
  return value === undefined ? undefined : parse(value);
}
