// run-controller-config: contract enforcement settings, globally and per
// target kind. Parsed strictly: a typo is reported (and the last good config
// kept) instead of guessed at.
import { DEFAULT_RUN_TIMEOUT_MS } from "@quarry/api";
import { ConfigError, configDuration } from "@quarry/kube";
import yaml from "js-yaml";

export const CONFIG_MAP_NAME = "run-controller-config";

export interface EnforcementPolicy {
  enabled: boolean;
  /** TEP-0002: a run nobody initialised within this long fails with ControllerNotFound. */
  initialUpdateTimeoutMs: number;
  /** How long the owning controller gets to honour a cancel or a timeout before we mark it. */
  graceMs: number;
}

export interface KindPolicy extends Partial<EnforcementPolicy> {
  /** The target's group (from its apiVersion); any group when absent. */
  group?: string;
  kind: string;
}

export interface RunControllerConfig {
  defaults: EnforcementPolicy;
  kinds: KindPolicy[];
  /** spec.timeout when unset (Tekton's 60m). */
  defaultTimeoutMs: number;
}

export const defaultRunControllerConfig: RunControllerConfig = {
  defaults: { enabled: true, initialUpdateTimeoutMs: 30_000, graceMs: 30_000 },
  kinds: [],
  defaultTimeoutMs: DEFAULT_RUN_TIMEOUT_MS,
};

const KNOWN_KEYS = new Set([
  "enforcement",
  "initial-update-timeout",
  "enforcement-grace",
  "default-timeout",
  "kinds",
]);

function parseEnabled(key: string, value: string): boolean {
  const v = value.trim();
  if (v === "enabled" || v === "true") return true;
  if (v === "disabled" || v === "false") return false;
  throw new ConfigError(key, `must be "enabled" or "disabled", got "${value}"`);
}

function parseKinds(raw: string): KindPolicy[] {
  let doc: unknown;
  try {
    doc = yaml.load(raw);
  } catch (err) {
    throw new ConfigError("kinds", `not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return [];
  if (!Array.isArray(doc)) throw new ConfigError("kinds", "must be a YAML list of {group, kind, ...}");
  return doc.map((entry, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    const at = `kinds[${i}]`;
    if (typeof e.kind !== "string" || !e.kind) throw new ConfigError(at, "needs a kind");
    for (const k of Object.keys(e)) {
      if (!["group", "kind", "enforcement", "initial-update-timeout", "enforcement-grace"].includes(k))
        throw new ConfigError(at, `unknown field "${k}"`);
    }
    const policy: KindPolicy = { kind: e.kind };
    if (e.group !== undefined) policy.group = String(e.group);
    if (e.enforcement !== undefined)
      policy.enabled = parseEnabled(`${at}.enforcement`, String(e.enforcement));
    if (e["initial-update-timeout"] !== undefined)
      policy.initialUpdateTimeoutMs = configDuration(
        `${at}.initial-update-timeout`,
        String(e["initial-update-timeout"]),
      );
    if (e["enforcement-grace"] !== undefined)
      policy.graceMs = configDuration(`${at}.enforcement-grace`, String(e["enforcement-grace"]));
    return policy;
  });
}

export function parseRunControllerConfig(
  data: Record<string, string>,
  defaults: RunControllerConfig,
): RunControllerConfig {
  for (const key of Object.keys(data)) {
    if (!KNOWN_KEYS.has(key)) throw new ConfigError(key, "unknown key");
  }
  const policy = { ...defaults.defaults };
  if (data.enforcement !== undefined) policy.enabled = parseEnabled("enforcement", data.enforcement);
  if (data["initial-update-timeout"] !== undefined)
    policy.initialUpdateTimeoutMs = configDuration("initial-update-timeout", data["initial-update-timeout"]);
  if (data["enforcement-grace"] !== undefined)
    policy.graceMs = configDuration("enforcement-grace", data["enforcement-grace"]);
  return {
    defaults: policy,
    kinds: data.kinds !== undefined ? parseKinds(data.kinds) : defaults.kinds,
    defaultTimeoutMs:
      data["default-timeout"] !== undefined
        ? configDuration("default-timeout", data["default-timeout"])
        : defaults.defaultTimeoutMs,
  };
}

/** The policy for a target: the first matching `kinds` entry over the defaults. */
export function policyFor(
  config: RunControllerConfig,
  target: { apiVersion: string | undefined; kind: string | undefined },
): EnforcementPolicy {
  const group = target.apiVersion?.includes("/") ? target.apiVersion.split("/")[0] : undefined;
  const match = config.kinds.find(
    (k) => k.kind === target.kind && (k.group === undefined || k.group === group),
  );
  if (!match) return config.defaults;
  const { group: _g, kind: _k, ...override } = match;
  return { ...config.defaults, ...override };
}
