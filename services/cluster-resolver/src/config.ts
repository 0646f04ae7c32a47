// cluster-resolver-config, with Tekton's keys and Tekton's meaning of them
// (v1.15's cluster resolver): the namespace lists are comma-separated, each
// entry trimmed, empty entries ignored; a key whose value is the empty
// string is not set.
import { ConfigError } from "@quarry/kube";
import type { ConfigKeys, ResolverConfig } from "@quarry/resolver-sdk";
import { CLUSTER_KINDS, type ClusterKind } from "./kinds.ts";

export const KEYS = {
  defaultKind: "default-kind",
  defaultNamespace: "default-namespace",
  allowedNamespaces: "allowed-namespaces",
  blockedNamespaces: "blocked-namespaces",
} as const;

/** Tekton's cluster resolver reads no key that this one does not. */
export const clusterConfigKeys: ConfigKeys = { known: Object.values(KEYS) };

export interface ClusterPolicy {
  defaultKind: ClusterKind;
  defaultNamespace: string | undefined;
  /** undefined when the key is unset or empty; a set key may list no namespace (" , "). */
  allowed: readonly string[] | undefined;
  blocked: readonly string[] | undefined;
}

// Tekton tests a key's raw value against "" before splitting it, so " " is set, listing nothing
const list = (v: string | undefined) =>
  v === undefined || v === ""
    ? undefined
    : v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);

export function clusterPolicy(config: ResolverConfig): ClusterPolicy {
  const kind = (config[KEYS.defaultKind] ?? "").trim().toLowerCase() || "task";
  if (!(CLUSTER_KINDS as readonly string[]).includes(kind)) {
    throw new ConfigError(
      KEYS.defaultKind,
      `must be one of ${CLUSTER_KINDS.join(", ")}, got "${config[KEYS.defaultKind]}"`,
    );
  }
  return {
    defaultKind: kind as ClusterKind,
    defaultNamespace: config[KEYS.defaultNamespace]?.trim() || undefined,
    allowed: list(config[KEYS.allowedNamespaces]),
    blocked: list(config[KEYS.blockedNamespaces]),
  };
}

export type NamespaceVerdict = { allowed: true } | { allowed: false; message: string };

const ALLOWED: NamespaceVerdict = { allowed: true };
const refused = (message: string): NamespaceVerdict => ({ allowed: false, message });

/**
 * May a request in `requestNamespace` read from `target`? Tekton's rules, in Tekton's order and
 * words: a namespace listed in blocked-namespaces is refused; one listed in allowed-namespaces is
 * read; "*" in blocked-namespaces refuses every other; a set allowed-namespaces refuses every
 * namespace it does not list; else the namespace is read.
 *
 * Quarry's two differences, both only where Tekton's answer would open every namespace or none:
 * with neither key set, a request reads only its own namespace (Tekton: every namespace); and "*"
 * in allowed-namespaces lists every namespace (Tekton reads it as a name no namespace has, so it
 * refuses all), the way to ask for Tekton's unset default.
 */
export function namespaceVerdict(
  target: string,
  requestNamespace: string,
  policy: Pick<ClusterPolicy, "allowed" | "blocked">,
): NamespaceVerdict {
  const { allowed, blocked } = policy;
  if (blocked?.includes(target)) return refused(`access to specified namespace ${target} is blocked`);
  if (allowed?.includes(target) || allowed?.includes("*")) return ALLOWED;
  if (blocked?.includes("*")) return refused("only explicit allowed access to namespaces is allowed");
  if (allowed !== undefined) return refused(`access to specified namespace ${target} is not allowed`);
  if (blocked === undefined && target !== requestNamespace) {
    return refused(
      `access to specified namespace ${target} is not allowed: with neither ${KEYS.allowedNamespaces} nor ${KEYS.blockedNamespaces} set, a request reads only its own namespace (${requestNamespace})`,
    );
  }
  return ALLOWED;
}
