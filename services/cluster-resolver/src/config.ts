// cluster-resolver-config, with Tekton's keys. Namespace lists are
// comma-separated, whitespace trimmed; "*" means every namespace.
import { ConfigError } from "@quarry/kube";
import type { ResolverConfig } from "@quarry/resolver-sdk";
import { CLUSTER_KINDS, type ClusterKind } from "./kinds.ts";

export interface ClusterPolicy {
  defaultKind: ClusterKind;
  defaultNamespace: string | undefined;
  allowed: readonly string[];
  blocked: readonly string[];
}

const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function clusterPolicy(config: ResolverConfig): ClusterPolicy {
  const kind = (config["default-kind"] ?? "").trim().toLowerCase() || "task";
  if (!(CLUSTER_KINDS as readonly string[]).includes(kind)) {
    throw new ConfigError(
      "default-kind",
      `must be one of ${CLUSTER_KINDS.join(", ")}, got "${config["default-kind"]}"`,
    );
  }
  return {
    defaultKind: kind as ClusterKind,
    defaultNamespace: config["default-namespace"]?.trim() || undefined,
    allowed: list(config["allowed-namespaces"]),
    blocked: list(config["blocked-namespaces"]),
  };
}

/**
 * Quarry's default is stricter than Tekton's: a request may read its own
 * namespace, plus those in allowed-namespaces; blocked-namespaces always wins.
 */
export function namespaceAllowed(target: string, requestNamespace: string, policy: ClusterPolicy): boolean {
  if (policy.blocked.includes("*") || policy.blocked.includes(target)) return false;
  return target === requestNamespace || policy.allowed.includes("*") || policy.allowed.includes(target);
}
