// pipe-resolver-config: how long a pipe pod may take, and what the deployment
// decides for every pipe pod (the waiting container's image, networking,
// placement). Values are parsed strictly; a bad one throws ConfigError naming
// the key, so the runtime keeps the last good config. Keys this file does not
// know are left alone: the runtime's own keys (resolution-timeout,
// max-attempts, ...) share the ConfigMap.
import { ConfigError, configDuration } from "@quarry/kube";
import { load } from "js-yaml";
import { DEFAULT_WAIT_IMAGE, type PodDefaults } from "./pod.ts";
import { defaultPodPolicy, POD_POLICY_RULES, type PodPolicy, type PodPolicyRule } from "./pod-policy.ts";

export const CONFIG_MAP_NAME = "pipe-resolver-config";

export const KEYS = {
  pendingTimeout: "pending-timeout",
  waitImage: "wait-image",
  waitImagePullPolicy: "wait-image-pull-policy",
  hostNetwork: "host-network",
  nodeName: "node-name",
  tolerations: "tolerations",
  podPolicyAllow: "pod-policy-allow",
  allowedServiceAccounts: "allowed-service-accounts",
} as const;

export interface PipeConfig {
  /** From the pod's creation until its init container has finished and the waiting container runs. */
  pendingTimeoutMs: number;
  podDefaults: PodDefaults;
  /** What a strategy's pod may ask for (pod-policy.ts). */
  podPolicy: PodPolicy;
}

export const DEFAULT_PENDING_TIMEOUT_MS = 2 * 60_000;

export const defaultPipeConfig: PipeConfig = {
  pendingTimeoutMs: DEFAULT_PENDING_TIMEOUT_MS,
  podDefaults: { waitImage: DEFAULT_WAIT_IMAGE, hostNetwork: false },
  podPolicy: defaultPodPolicy,
};

const PULL_POLICIES: readonly string[] = ["Always", "IfNotPresent", "Never"];
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const TOLERATION_FIELDS: Readonly<Record<string, "string" | "number">> = {
  key: "string",
  operator: "string",
  value: "string",
  effect: "string",
  tolerationSeconds: "number",
};
const OPERATORS: readonly string[] = ["Exists", "Equal"];
const EFFECTS: readonly string[] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

const memo = new WeakMap<object, PipeConfig>();

/** The parsed config for the resolver's live config (parsed once per config object). */
export function pipeConfig(data: Readonly<Record<string, string>>): PipeConfig {
  let parsed = memo.get(data);
  if (!parsed) {
    parsed = parsePipeConfig(data);
    memo.set(data, parsed);
  }
  return parsed;
}

export function parsePipeConfig(data: Readonly<Record<string, string>>): PipeConfig {
  const get = (key: string) => {
    const v = data[key]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const timeout = get(KEYS.pendingTimeout);
  const image = get(KEYS.waitImage);
  if (image !== undefined && /\s/.test(image))
    throw new ConfigError(KEYS.waitImage, `must be an image reference without spaces, got "${image}"`);
  const pullPolicy = get(KEYS.waitImagePullPolicy);
  if (pullPolicy !== undefined && !PULL_POLICIES.includes(pullPolicy))
    throw new ConfigError(
      KEYS.waitImagePullPolicy,
      `must be one of ${PULL_POLICIES.join(", ")}, got "${pullPolicy}"`,
    );
  const hostNetwork = get(KEYS.hostNetwork);
  if (hostNetwork !== undefined && hostNetwork !== "true" && hostNetwork !== "false")
    throw new ConfigError(KEYS.hostNetwork, `must be true or false, got "${hostNetwork}"`);
  const nodeName = get(KEYS.nodeName);
  if (nodeName !== undefined && (nodeName.length > 253 || !DNS1123_SUBDOMAIN.test(nodeName)))
    throw new ConfigError(KEYS.nodeName, `must be a node name (a DNS-1123 subdomain), got "${nodeName}"`);
  const tolerations = parseTolerations(get(KEYS.tolerations));
  const podPolicy: PodPolicy = {
    allow: parsePolicyAllow(get(KEYS.podPolicyAllow)),
    serviceAccounts: parseServiceAccounts(get(KEYS.allowedServiceAccounts)),
  };

  const podDefaults: PodDefaults = {
    waitImage: image ?? DEFAULT_WAIT_IMAGE,
    hostNetwork: hostNetwork === "true",
  };
  if (pullPolicy !== undefined) podDefaults.waitImagePullPolicy = pullPolicy;
  if (nodeName !== undefined) podDefaults.nodeName = nodeName;
  if (tolerations.length > 0) podDefaults.tolerations = tolerations;
  return {
    pendingTimeoutMs:
      timeout === undefined ? DEFAULT_PENDING_TIMEOUT_MS : configDuration(KEYS.pendingTimeout, timeout),
    podDefaults,
    podPolicy,
  };
}

/** A list separated by commas and/or white space. */
function listOf(raw: string | undefined): string[] {
  return (raw ?? "").split(/[\s,]+/).filter((s) => s !== "");
}

/** pod-policy-allow: names from POD_POLICY_RULES. */
function parsePolicyAllow(raw: string | undefined): Set<PodPolicyRule> {
  const allow = new Set<PodPolicyRule>();
  for (const name of listOf(raw)) {
    if (!(POD_POLICY_RULES as readonly string[]).includes(name))
      throw new ConfigError(
        KEYS.podPolicyAllow,
        `"${name}" is not a pod policy rule; use any of ${POD_POLICY_RULES.join(", ")}`,
      );
    allow.add(name as PodPolicyRule);
  }
  return allow;
}

/** allowed-service-accounts: `*`, `name` or `namespace/name`, each part a Kubernetes object name. */
function parseServiceAccounts(raw: string | undefined): string[] {
  const accounts = listOf(raw);
  for (const a of accounts) {
    if (a === "*") continue;
    const parts = a.split("/");
    const ok =
      parts.length <= 2 &&
      parts.every((p) => p.length <= 253 && DNS1123_SUBDOMAIN.test(p)) &&
      (parts.length === 1 || parts[0]!.length <= 63);
    if (!ok)
      throw new ConfigError(
        KEYS.allowedServiceAccounts,
        `"${a}" is not a ServiceAccount: use name, namespace/name or *`,
      );
  }
  return accounts;
}

/** A YAML (or JSON) list of core/v1 Tolerations, checked field by field. */
function parseTolerations(raw: string | undefined): Record<string, unknown>[] {
  if (raw === undefined) return [];
  const bad = (message: string) => new ConfigError(KEYS.tolerations, message);
  let value: unknown;
  try {
    value = load(raw);
  } catch (err) {
    throw bad(`is not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (!Array.isArray(value)) throw bad("must be a YAML list of tolerations");
  return value.map((t: unknown, i) => {
    if (typeof t !== "object" || t === null || Array.isArray(t))
      throw bad(`[${i}] must be a toleration (an object)`);
    const entry = t as Record<string, unknown>;
    for (const [field, v] of Object.entries(entry)) {
      const type = TOLERATION_FIELDS[field];
      if (type === undefined)
        throw bad(`[${i}].${field} is not a toleration field (${Object.keys(TOLERATION_FIELDS).join(", ")})`);
      if (typeof v !== type || (type === "number" && !Number.isInteger(v)))
        throw bad(`[${i}].${field} must be ${type === "number" ? "an integer" : "a string"}`);
    }
    if (entry.operator !== undefined && !OPERATORS.includes(entry.operator as string))
      throw bad(`[${i}].operator must be Exists or Equal, got "${String(entry.operator)}"`);
    if (entry.effect !== undefined && !EFFECTS.includes(entry.effect as string))
      throw bad(`[${i}].effect must be one of ${EFFECTS.join(", ")}, got "${String(entry.effect)}"`);
    if (entry.operator === "Exists" && entry.value !== undefined && entry.value !== "")
      throw bad(`[${i}]: operator Exists takes no value`);
    if (entry.key === undefined && entry.operator !== "Exists")
      throw bad(`[${i}]: a toleration without a key must use operator Exists`);
    if (entry.tolerationSeconds !== undefined && entry.effect !== "NoExecute")
      throw bad(`[${i}].tolerationSeconds applies only to effect NoExecute`);
    return { ...entry };
  });
}
