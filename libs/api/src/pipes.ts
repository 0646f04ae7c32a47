// Quarry's pipe kinds (quarry.dev/v1alpha1): Pipe, PipeStrategy and
// ClusterPipeStrategy, after KUDO's KEP-17 pipe tasks. A strategy is an
// admin-owned pod template: one init container writes files into one emptyDir
// it mounts; Quarry adds the container that waits while the pipe resolver
// copies the files out. A Pipe names a strategy, values for the strategy's
// declared params, and which files become which ConfigMap or Secret.
//
// Plain JSON shapes; the pod spec is typed only where Quarry reads it, the
// rest passes through unchanged.
import type { ParamDeclaration } from "./substitution.ts";
import type { ObjectMeta, Param } from "./types.ts";

export const QUARRY_GROUP = "quarry.dev";
export const QUARRY_V1ALPHA1 = "quarry.dev/v1alpha1";

export const PIPE_KIND = "Pipe";
export const PIPE_STRATEGY_KIND = "PipeStrategy";
export const CLUSTER_PIPE_STRATEGY_KIND = "ClusterPipeStrategy";

export const pipes = {
  group: QUARRY_GROUP,
  version: "v1alpha1",
  plural: "pipes",
  kind: PIPE_KIND,
  namespaced: true,
} as const;

export const pipeStrategies = {
  group: QUARRY_GROUP,
  version: "v1alpha1",
  plural: "pipestrategies",
  kind: PIPE_STRATEGY_KIND,
  namespaced: true,
} as const;

export const clusterPipeStrategies = {
  group: QUARRY_GROUP,
  version: "v1alpha1",
  plural: "clusterpipestrategies",
  kind: CLUSTER_PIPE_STRATEGY_KIND,
  namespaced: false,
} as const;

export type PipeStrategyKind = typeof PIPE_STRATEGY_KIND | typeof CLUSTER_PIPE_STRATEGY_KIND;
export const PIPE_STRATEGY_KINDS: readonly PipeStrategyKind[] = [
  PIPE_STRATEGY_KIND,
  CLUSTER_PIPE_STRATEGY_KIND,
];

/** What a piped file is stored as. */
export type PipeOutputKind = "Secret" | "ConfigMap";
export const PIPE_OUTPUT_KINDS: readonly PipeOutputKind[] = ["Secret", "ConfigMap"];

// ---- rules shared by the CRD schemas (CEL, patterns) and the pipe resolver's own checks ----

/** A pipe entry's key: names its ConfigMap/Secret (`<owner>-<pipe>-<key>`) and the run result. */
export const PIPE_KEY_PATTERN = "^[a-zA-Z0-9_-]+$";
export const MAX_PIPE_KEY_LENGTH = 63;
/** A piped file's base name: it becomes the ConfigMap/Secret data key, so Kubernetes' key rules. */
export const PIPE_FILE_NAME_PATTERN = "^[-._a-zA-Z0-9]+$";
/** Kubernetes' limit on a ConfigMap/Secret data key (and so on a file's base name). */
export const MAX_DATA_KEY_LENGTH = 253;
export const MAX_PIPE_PATH_LENGTH = 1024;
/** Bounds spec.pipe (the CEL uniqueness rule on keys is quadratic). */
export const MAX_PIPE_ENTRIES = 64;
/** Bounds of the pod-spec lists the strategy's CEL rules walk. */
export const MAX_POD_CONTAINERS = 16;
export const MAX_POD_VOLUMES = 64;
export const MAX_VOLUME_MOUNTS = 64;
/** Kubernetes' limit on a container's or a volume's name (a DNS-1123 label). */
export const MAX_POD_NAME_FIELD_LENGTH = 63;
/** `restartPolicy` values a pipe pod may have: unset (OnFailure is used) or OnFailure. */
export const PIPE_RESTART_POLICIES: readonly string[] = ["", "OnFailure"];
/** Request params of the pipe resolver itself; a strategy may not declare params of these names. */
export const RESERVED_PIPE_PARAM_NAMES: readonly string[] = ["pipe", "strategy", "strategyKind", "files"];
/** Tekton's rule for a declared param's name. */
export const PIPE_PARAM_NAME_PATTERN = "^[a-zA-Z_][a-zA-Z0-9_.-]*$";
/**
 * An entry of a ClusterPipeStrategy's spec.allowedNamespaces: a namespace name, or a glob over names
 * where `*` stands for any run of characters (`team-*`; `*` alone: every namespace).
 */
export const ALLOWED_NAMESPACE_PATTERN = "^[a-z0-9*]([-a-z0-9*]*[a-z0-9*])?$";
/** Kubernetes' limit on a namespace's name (a DNS-1123 label). */
export const MAX_NAMESPACE_LENGTH = 63;
/** Bounds spec.allowedNamespaces. */
export const MAX_ALLOWED_NAMESPACES = 256;

// ---- the pod spec, typed where Quarry reads it ----

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
  [field: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  volumeMounts?: VolumeMount[];
  [field: string]: unknown;
}

export interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  [field: string]: unknown;
}

/** A core/v1 PodSpec: the fields Quarry reads or sets; everything else passes through. */
export interface PodSpec {
  initContainers?: Container[];
  containers?: Container[];
  volumes?: Volume[];
  restartPolicy?: string;
  hostNetwork?: boolean;
  nodeName?: string;
  tolerations?: Record<string, unknown>[];
  [field: string]: unknown;
}

export interface Pod {
  apiVersion: "v1";
  kind: "Pod";
  metadata: ObjectMeta;
  spec: PodSpec;
}

// ---- the kinds ----

/** A file a strategy's pod writes, and the kind of object its output must be. */
export interface PipeStrategyOutput {
  /** The file's absolute path (a Pipe entry's `file` or `envFile`). */
  path: string;
  /** ConfigMap: the file is not secret and may be stored as a ConfigMap (or a Secret). Secret: only as a Secret. */
  kind: PipeOutputKind;
}

export interface PipeStrategySpec {
  /** Params the pod declares (Tekton's ParamSpec), referenced as $(params.x) in the init container's command, args and env values. */
  params?: ParamDeclaration[];
  /** The pipe pod's spec (KEP-17 rules: one init container, one emptyDir it mounts, no containers, restartPolicy OnFailure or unset). */
  pod: PodSpec;
  /**
   * The strategy's say over each output's kind: a file is stored as a ConfigMap only where it is
   * listed here with kind ConfigMap; any other file (listed Secret, or not listed) only as a Secret.
   */
  outputs?: PipeStrategyOutput[];
  /** Whether a request may name its own files (params strategy + strategyKind + files) instead of a Pipe. Default false. */
  allowInlineFiles?: boolean;
}

/** A ClusterPipeStrategy's spec: a strategy's, plus which namespaces may use it. */
export interface ClusterPipeStrategySpec extends PipeStrategySpec {
  /**
   * Namespaces whose Pipes and requests may use the strategy: names, or globs with `*`
   * (ALLOWED_NAMESPACE_PATTERN); `["*"]` allows every namespace. Unset or empty: none.
   */
  allowedNamespaces?: string[];
}

/** Namespaced: a pod template for the Pipes of its own namespace. */
export interface PipeStrategy {
  apiVersion: typeof QUARRY_V1ALPHA1;
  kind: typeof PIPE_STRATEGY_KIND;
  metadata: ObjectMeta;
  spec: PipeStrategySpec;
}

/** Cluster-scoped: a pod template for the Pipes of the namespaces it allows (spec.allowedNamespaces). */
export interface ClusterPipeStrategy {
  apiVersion: typeof QUARRY_V1ALPHA1;
  kind: typeof CLUSTER_PIPE_STRATEGY_KIND;
  metadata: ObjectMeta;
  spec: ClusterPipeStrategySpec;
}

export type AnyPipeStrategy = PipeStrategy | ClusterPipeStrategy;

export interface PipeStrategyRef {
  kind: PipeStrategyKind;
  name: string;
}

/** One piped file: exactly one of file / envFile, an absolute path under the strategy's emptyDir mount. */
export interface PipeEntry {
  /** Stored whole, under its base name as the data key. */
  file?: string;
  /** Read as KEY=VALUE lines, one data key per line. */
  envFile?: string;
  kind: PipeOutputKind;
  key: string;
}

/** A Pipe's value for a strategy param. */
export interface PipeParam extends Param {
  /** A request (or a Pipe run) may not give this param another value. Default false: a request's value wins. */
  fixed?: boolean;
}

export interface PipeSpec {
  strategy: PipeStrategyRef;
  /** Values for the strategy's declared params; a request's params override them by name, unless fixed. */
  params?: PipeParam[];
  pipe: PipeEntry[];
}

export interface Pipe {
  apiVersion: typeof QUARRY_V1ALPHA1;
  kind: typeof PIPE_KIND;
  metadata: ObjectMeta;
  spec: PipeSpec;
}

/**
 * One entry of a resolved pipe request's `status.data` (a YAML list of these): what was stored
 * where. A Pipe run turns each into a result `key → name`.
 */
export interface PipeResult {
  key: string;
  kind: PipeOutputKind;
  /** The ConfigMap's or Secret's name, in the request's namespace. */
  name: string;
  /** ConfigMap outputs: hex SHA-256 of the file's bytes as copied from the pod. */
  sha256?: string;
  /**
   * Secret outputs: hex HMAC-SHA256 of the bytes under the pipe resolver's installation key, never
   * their plain SHA-256 (which would let anyone who reads the status test guesses of a short secret).
   */
  hmacSha256?: string;
}

/**
 * The list as PipeResults, or undefined when it is not a list of well-formed entries: each with a
 * key, kind and name and one digest (a ConfigMap's sha256; a Secret's hmacSha256, or the plain
 * sha256 a resolver before the keyed digest wrote).
 */
export function pipeResultsOf(list: unknown): PipeResult[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const results: PipeResult[] = [];
  for (const r of list as unknown[]) {
    if (typeof r !== "object" || r === null) return undefined;
    const { key, kind, name, sha256, hmacSha256 } = r as Record<string, unknown>;
    if (typeof key !== "string" || typeof name !== "string") return undefined;
    if (!PIPE_OUTPUT_KINDS.includes(kind as PipeOutputKind)) return undefined;
    if (typeof sha256 === "string" && hmacSha256 === undefined)
      results.push({ key, kind: kind as PipeOutputKind, name, sha256 });
    else if (kind === "Secret" && typeof hmacSha256 === "string" && sha256 === undefined)
      results.push({ key, kind, name, hmacSha256 });
    else return undefined;
  }
  return results;
}
