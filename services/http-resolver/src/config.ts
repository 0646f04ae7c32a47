// http-resolver-config: Tekton's key (fetch-timeout) plus Quarry's credential
// policy (credential-bindings, insecure-hosts) and the SDK's egress keys
// (ca-bundle, proxy, no-proxy, blocked-networks). A bad value throws
// ConfigError naming the key, so the runtime keeps the last good config. The
// runtime's own keys (resolution-timeout, default-cache-mode, ...) share the
// ConfigMap and are left to it.
import { configDuration } from "@quarry/kube";
import {
  type ConfigKeys,
  CREDENTIAL_BINDINGS_KEY,
  type CredentialBinding,
  EGRESS_KEYS,
  type Egress,
  effectiveEgress,
  INSECURE_HOSTS_KEY,
  type InsecureHost,
  parseCredentialBindings,
  parseEgress,
  parseInsecureHosts,
  type ResolverConfig,
} from "@quarry/resolver-sdk";

export const CONFIG_MAP_NAME = "http-resolver-config";
export const FETCH_TIMEOUT_KEY = "fetch-timeout";

/**
 * fetch-timeout when neither it nor the runtime's resolution-timeout is set: the value Tekton's
 * http-resolver-config ships, and its resolver's default for an unset key.
 */
export const TEKTON_FETCH_TIMEOUT_MS = 60_000;

/** Tekton's one key (fetch-timeout), Quarry's credential policy and the egress keys. */
export const httpConfigKeys: ConfigKeys = {
  known: [FETCH_TIMEOUT_KEY, CREDENTIAL_BINDINGS_KEY, INSECURE_HOSTS_KEY, ...Object.values(EGRESS_KEYS)],
};

export interface HttpConfig {
  /**
   * Per-attempt deadline (Tekton's fetch-timeout) when set; unset, the runtime's resolution-timeout
   * if that is set, else TEKTON_FETCH_TIMEOUT_MS (HttpResolver.timeout).
   */
  fetchTimeoutMs: number | undefined;
  /** Which Secrets' passwords may go to which URLs, besides the Secrets' own annotations. */
  credentialBindings: readonly CredentialBinding[];
  /** Hosts a password may reach over plain http. */
  insecureHosts: readonly InsecureHost[];
  /** CAs, proxy, no-proxy and blocked networks, with the pod's proxy env filled in. */
  egress: Egress;
}

export function parseHttpConfig(data: ResolverConfig): HttpConfig {
  const timeout = data[FETCH_TIMEOUT_KEY]?.trim();
  return {
    fetchTimeoutMs: timeout ? configDuration(FETCH_TIMEOUT_KEY, timeout) : undefined,
    credentialBindings: parseCredentialBindings(data[CREDENTIAL_BINDINGS_KEY]),
    insecureHosts: parseInsecureHosts(data[INSECURE_HOSTS_KEY]),
    egress: effectiveEgress(parseEgress(data)),
  };
}
