// Tekton's VerificationPolicy (tekton.dev/v1alpha1) as the resolvers apply it.
// A policy is read whether or not Tekton's webhook validated it: whatever it
// would have refused, and what Quarry refuses besides (a key Secret in another
// namespace, a KMS key), makes the policy unusable, and an unusable policy
// fails (enforce) or warns about every source it may match rather than being
// skipped: a broken policy must not verify less than a working one.
import { HASH_ALGORITHMS } from "./keys.ts";
import { compilePattern, type SourcePattern } from "./pattern.ts";

export type PolicyMode = "enforce" | "warn";

/** Where an authority's public key comes from. */
export type KeySource =
  | { from: "data"; pem: string }
  /** A Secret of the policy's own namespace holding exactly one data entry, the PEM key. */
  | { from: "secret"; namespace: string; name: string };

export interface Authority {
  name: string;
  key: KeySource;
  /** The hashAlgorithm as written (empty: sha256); checked when the key is loaded. */
  hash: string;
}

export interface VerificationPolicy {
  namespace: string;
  name: string;
  mode: PolicyMode;
  patterns: readonly SourcePattern[];
  authorities: readonly Authority[];
  /**
   * Why the policy cannot verify anything. With `patterns` empty (one did not compile) nobody
   * can tell which sources it covers, so it applies to every source of its namespace.
   */
  problem?: string;
}

interface RawAuthority {
  name?: unknown;
  key?: {
    secretRef?: { name?: unknown; namespace?: unknown };
    data?: unknown;
    kms?: unknown;
    hashAlgorithm?: unknown;
  };
}

interface RawPolicy {
  metadata?: { name?: string; namespace?: string };
  spec?: { resources?: { pattern?: unknown }[]; authorities?: RawAuthority[]; mode?: unknown };
}

export async function parseVerificationPolicy(obj: unknown): Promise<VerificationPolicy> {
  const raw = (obj ?? {}) as RawPolicy;
  const namespace = raw.metadata?.namespace ?? "";
  const name = raw.metadata?.name ?? "";
  const spec = raw.spec ?? {};
  const problems: string[] = [];
  const mode = spec.mode === "warn" ? "warn" : "enforce";
  if (spec.mode !== undefined && spec.mode !== "" && spec.mode !== "warn" && spec.mode !== "enforce")
    problems.push(`spec.mode is "${String(spec.mode)}": enforce or warn`);

  const resources = Array.isArray(spec.resources) ? spec.resources : [];
  if (resources.length === 0) problems.push("spec.resources is empty");
  const patterns: SourcePattern[] = [];
  let uncompiled = false;
  for (const [i, r] of resources.entries()) {
    const compiled = await compilePattern(typeof r?.pattern === "string" ? r.pattern : "");
    if (compiled.ok) patterns.push(compiled.pattern);
    else {
      uncompiled = true;
      problems.push(`spec.resources[${i}].pattern: ${compiled.message}`);
    }
  }

  const rawAuthorities = Array.isArray(spec.authorities) ? spec.authorities : [];
  if (rawAuthorities.length === 0) problems.push("spec.authorities is empty");
  const authorities: Authority[] = [];
  for (const [i, a] of rawAuthorities.entries()) {
    const parsed = parseAuthority(a, namespace, `spec.authorities[${i}]`);
    if (typeof parsed === "string") problems.push(parsed);
    else authorities.push(parsed);
  }

  return {
    namespace,
    name,
    mode,
    patterns: uncompiled ? [] : patterns,
    authorities,
    ...(problems.length > 0 && { problem: problems.join("; ") }),
  };
}

function parseAuthority(a: RawAuthority, namespace: string, at: string): Authority | string {
  const name = typeof a?.name === "string" ? a.name : "";
  const key = a?.key;
  if (!key) return `${at}.key is missing`;
  const hash = typeof key.hashAlgorithm === "string" ? key.hashAlgorithm : "";
  if (hash !== "" && !(HASH_ALGORITHMS as readonly string[]).includes(hash.toLowerCase()))
    return `${at}.key.hashAlgorithm is "${hash}": ${HASH_ALGORITHMS.join(", ")}`;
  const set = (["data", "secretRef", "kms"] as const).filter((k) => key[k] !== undefined && key[k] !== "");
  if (set.length !== 1)
    return `${at}.key sets ${set.length === 0 ? "none" : set.join(" and ")} of data, secretRef and kms: exactly one`;
  if (set[0] === "kms")
    return `${at}.key.kms: KMS keys are not supported; give the public key as data or secretRef`;
  if (set[0] === "data") {
    if (typeof key.data !== "string") return `${at}.key.data is not a string`;
    return { name, key: { from: "data", pem: key.data }, hash };
  }
  const ref = key.secretRef ?? {};
  const secretName = typeof ref.name === "string" ? ref.name : "";
  const secretNamespace =
    typeof ref.namespace === "string" && ref.namespace !== "" ? ref.namespace : namespace;
  if (!secretName) return `${at}.key.secretRef.name is missing`;
  // a policy may only name keys its own namespace holds: a resolver reads Secrets with its own
  // rights, and a policy must not be a way to make it read (or depend on) another tenant's
  if (secretNamespace !== namespace)
    return `${at}.key.secretRef names a Secret in namespace "${secretNamespace}": a policy's key Secret must be in its own namespace "${namespace}"`;
  return { name, key: { from: "secret", namespace, name: secretName }, hash };
}

/** Whether `policy` covers `source` (normalized): every pattern-less (unusable) policy does. */
export function policyCovers(policy: VerificationPolicy, source: string): boolean {
  if (policy.patterns.length === 0) return true;
  return policy.patterns.some((p) => p.matches(source));
}
