// The pipe rules again, in code: not every cluster installs Quarry's pipe
// CRDs (and a request may name its files itself), so the resolver checks a
// strategy and a Pipe as it reads them. Each failure is terminal, with a
// specific reason and a message that names the object and the field:
//
//   InvalidStrategy   the pod breaks KEP-17's rules, or a param declaration, an output
//                     declaration or allowedNamespaces is malformed
//   InvalidPipe       a malformed strategy reference or pipe entry (path, key, kind,
//                     duplicate keys), or a file outside the emptyDir
//   DuplicateParam,   a Pipe's own param values are malformed
//   InvalidParamType
//
// Order of use: validatePipe (or request.ts for a request without a Pipe) →
// validateStrategy → checkFiles (the entries against the strategy's mount) →
// pod.ts buildPod.
import {
  ALLOWED_NAMESPACE_PATTERN,
  CLUSTER_PIPE_STRATEGY_KIND,
  type Container,
  isParamValue,
  MAX_NAMESPACE_LENGTH,
  MAX_PIPE_ENTRIES,
  MAX_PIPE_KEY_LENGTH,
  type Param,
  type ParamDeclaration,
  PIPE_KEY_PATTERN,
  PIPE_KIND,
  PIPE_OUTPUT_KINDS,
  PIPE_PARAM_NAME_PATTERN,
  PIPE_RESTART_POLICIES,
  PIPE_STRATEGY_KIND,
  PIPE_STRATEGY_KINDS,
  type PipeEntry,
  type PipeOutputKind,
  type PipeStrategyKind,
  type PipeStrategyRef,
  type PodSpec,
  QuarryReason,
  RESERVED_PIPE_PARAM_NAMES,
} from "@quarry/api";
import { type EmptyDirMount, type FileToCopy, filesToCopy, pathProblem } from "./files.ts";

/** The container Quarry adds to every pipe pod; a strategy's init container may not take its name. */
export const WAIT_CONTAINER_NAME = "quarry-wait";

export interface PipeFailure {
  ok: false;
  reason: QuarryReason;
  message: string;
}

/** A strategy that passed validateStrategy: the parts the pod is built from. */
export interface CheckedStrategy {
  kind: PipeStrategyKind;
  name: string;
  annotations: Readonly<Record<string, string>>;
  params: ParamDeclaration[];
  /** The strategy's pod spec, as written (never mutated). */
  pod: PodSpec;
  initContainer: Container;
  mount: EmptyDirMount;
  /** spec.outputs by path: the kind the strategy declares and the entry's index (for messages). */
  outputs: ReadonlyMap<string, { kind: PipeOutputKind; index: number }>;
  /** spec.allowInlineFiles (default false). */
  allowInlineFiles: boolean;
  /** A ClusterPipeStrategy's spec.allowedNamespaces (none when unset); undefined for a PipeStrategy. */
  allowedNamespaces?: readonly string[];
}

/** A Pipe that passed validatePipe (or a request's own files, read by request.ts). */
export interface CheckedPipe {
  /** The Pipe's name; for a request without a Pipe, the strategy's name. */
  name: string;
  strategy: PipeStrategyRef;
  /** The Pipe's values, without their `fixed` marks. */
  params: Param[];
  /** Params the Pipe fixes (spec.params[i].fixed), by name → i. Empty for a request's own files. */
  fixed: ReadonlyMap<string, number>;
  entries: PipeEntry[];
}

const q = (s: string) => JSON.stringify(s);
const KEY = new RegExp(PIPE_KEY_PATTERN);
const PARAM_NAME = new RegExp(PIPE_PARAM_NAME_PATTERN);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === "string");
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function failure(reason: QuarryReason, message: string): PipeFailure {
  return { ok: false, reason, message };
}

function nameOf(obj: Record<string, unknown>): string {
  const meta = obj.metadata;
  return isRecord(meta) && typeof meta.name === "string" ? meta.name : "";
}

// ---- strategies ----

export type StrategyResult = { ok: true; strategy: CheckedStrategy } | PipeFailure;

/**
 * Checks a PipeStrategy or ClusterPipeStrategy as read from the API (kind given by the caller:
 * list items need not carry it): KEP-17's pod rules (exactly one init container, no containers,
 * exactly one emptyDir volume, mounted once by the init container, restartPolicy OnFailure or
 * unset), the init container's command, args and env in the shapes substitution reads, and the
 * param declarations (names valid, unique, none of the resolver's own).
 */
export function validateStrategy(obj: unknown, kind: PipeStrategyKind): StrategyResult {
  const name = isRecord(obj) ? nameOf(obj) : "";
  const bad = (message: string) => failure(QuarryReason.InvalidStrategy, `${kind} ${q(name)}: ${message}`);
  if (!isRecord(obj) || name === "") return bad("not an object with metadata.name");
  const spec = obj.spec;
  if (!isRecord(spec)) return bad("spec is missing");
  const pod = spec.pod;
  if (pod === undefined) return bad("spec.pod is missing: a pipe strategy is a pod template");
  if (!isRecord(pod)) return bad(`spec.pod must be a pod spec (an object), not ${describe(pod)}`);

  const params = checkDeclarations(spec.params);
  if (typeof params === "string") return bad(params);
  const outputs = checkOutputs(spec.outputs);
  if (typeof outputs === "string") return bad(outputs);
  if (spec.allowInlineFiles !== undefined && typeof spec.allowInlineFiles !== "boolean")
    return bad("spec.allowInlineFiles must be true or false");
  let allowedNamespaces: readonly string[] | undefined;
  if (kind === CLUSTER_PIPE_STRATEGY_KIND) {
    const allowed = checkAllowedNamespaces(spec.allowedNamespaces);
    if (typeof allowed === "string") return bad(allowed);
    allowedNamespaces = allowed;
  }

  const inits = pod.initContainers;
  if (inits !== undefined && !Array.isArray(inits)) return bad("spec.pod.initContainers must be a list");
  const initCount = inits?.length ?? 0;
  if (initCount !== 1)
    return bad(
      `spec.pod.initContainers has ${initCount} containers; a pipe pod needs exactly one init container, the one that writes the piped files`,
    );
  const containers = pod.containers;
  if (containers !== undefined && !Array.isArray(containers))
    return bad("spec.pod.containers must be a list");
  if ((containers?.length ?? 0) > 0)
    return bad(
      `spec.pod.containers has ${containers!.length} container${containers!.length === 1 ? "" : "s"}; a pipe pod has none of its own (Quarry adds the one that waits while the files are copied)`,
    );
  const restartPolicy = pod.restartPolicy;
  if (restartPolicy !== undefined && !PIPE_RESTART_POLICIES.includes(restartPolicy as string))
    return bad(
      `spec.pod.restartPolicy is ${q(String(restartPolicy))}; a pipe pod's must be OnFailure or unset (the init container may run again, the waiting container must not)`,
    );

  const init = (inits as unknown[])[0];
  const path = "spec.pod.initContainers[0]";
  if (!isRecord(init) || typeof init.name !== "string" || init.name === "")
    return bad(`${path} must be a container with a name`);
  if (init.name === WAIT_CONTAINER_NAME)
    return bad(`${path} may not be named ${q(WAIT_CONTAINER_NAME)}: that is the container Quarry adds`);
  for (const field of ["command", "args"] as const)
    if (init[field] !== undefined && !isStringArray(init[field]))
      return bad(`${path}.${field} must be a list of strings`);
  if (init.env !== undefined) {
    if (!Array.isArray(init.env)) return bad(`${path}.env must be a list`);
    for (const [i, e] of init.env.entries())
      if (
        !isRecord(e) ||
        typeof e.name !== "string" ||
        (e.value !== undefined && typeof e.value !== "string")
      )
        return bad(`${path}.env[${i}] must have a name and, if any, a string value`);
  }

  const volumes = pod.volumes;
  if (volumes !== undefined && !Array.isArray(volumes)) return bad("spec.pod.volumes must be a list");
  const emptyDirs = (volumes ?? []).filter((v) => isRecord(v) && isRecord(v.emptyDir)) as Record<
    string,
    unknown
  >[];
  if (emptyDirs.length !== 1)
    return bad(
      `spec.pod.volumes has ${emptyDirs.length} emptyDir volumes; a pipe pod needs exactly one, where the init container writes the piped files`,
    );
  const volumeName = emptyDirs[0]!.name;
  if (typeof volumeName !== "string" || volumeName === "")
    return bad("spec.pod.volumes: the emptyDir volume has no name");

  const mounts = init.volumeMounts;
  if (mounts !== undefined && !Array.isArray(mounts)) return bad(`${path}.volumeMounts must be a list`);
  const onEmptyDir = (mounts ?? []).filter((m) => isRecord(m) && m.name === volumeName) as Record<
    string,
    unknown
  >[];
  if (onEmptyDir.length !== 1)
    return bad(
      `${path} mounts the emptyDir volume ${q(volumeName)} ${onEmptyDir.length} times; it must mount it once`,
    );
  const mount = onEmptyDir[0]!;
  if (typeof mount.mountPath !== "string" || !mount.mountPath.startsWith("/"))
    return bad(`${path}: the emptyDir volume ${q(volumeName)} must be mounted at an absolute path`);
  if (mount.readOnly === true)
    return bad(
      `${path} mounts the emptyDir volume ${q(volumeName)} read-only; it must write the piped files there`,
    );
  if (mount.subPathExpr !== undefined)
    return bad(
      `${path} mounts the emptyDir volume ${q(volumeName)} with subPathExpr, which the waiting container cannot expand; use subPath`,
    );
  if (mount.subPath !== undefined && typeof mount.subPath !== "string")
    return bad(`${path}: subPath of the emptyDir mount must be a string`);

  const meta = obj.metadata as Record<string, unknown>;
  const annotations = isRecord(meta.annotations) ? (meta.annotations as Record<string, string>) : {};
  return {
    ok: true,
    strategy: {
      kind,
      name,
      annotations,
      params,
      pod: pod as PodSpec,
      initContainer: init as Container,
      mount: {
        volumeName,
        mountPath: mount.mountPath,
        ...(typeof mount.subPath === "string" && mount.subPath !== "" ? { subPath: mount.subPath } : {}),
      },
      outputs,
      allowInlineFiles: spec.allowInlineFiles === true,
      ...(allowedNamespaces !== undefined ? { allowedNamespaces } : {}),
    },
  };
}

/** spec.outputs by path, or a message naming the entry at fault (the CRD's rules, for clusters without it). */
function checkOutputs(outputs: unknown): Map<string, { kind: PipeOutputKind; index: number }> | string {
  const byPath = new Map<string, { kind: PipeOutputKind; index: number }>();
  if (outputs === undefined) return byPath;
  if (!Array.isArray(outputs)) return "spec.outputs must be a list of {path, kind}";
  for (const [i, o] of outputs.entries()) {
    const at = `spec.outputs[${i}]`;
    if (!isRecord(o) || typeof o.path !== "string") return `${at} must have a path`;
    const problem = pathProblem(o.path);
    if (problem) return `${at}.path ${q(o.path)} ${problem}`;
    if (!PIPE_OUTPUT_KINDS.includes(o.kind as PipeOutputKind))
      return `${at}.kind is ${q(String(o.kind ?? ""))}; use Secret or ConfigMap`;
    const earlier = byPath.get(o.path);
    if (earlier) return `${at}.path ${q(o.path)} is also the path of spec.outputs[${earlier.index}]`;
    byPath.set(o.path, { kind: o.kind as PipeOutputKind, index: i });
  }
  return byPath;
}

const ALLOWED_NAMESPACE = new RegExp(ALLOWED_NAMESPACE_PATTERN);

/** A ClusterPipeStrategy's spec.allowedNamespaces (empty when unset), or a message naming the entry at fault. */
function checkAllowedNamespaces(value: unknown): string[] | string {
  if (value === undefined) return [];
  if (!isStringArray(value)) return "spec.allowedNamespaces must be a list of namespace names or globs";
  for (const [i, n] of value.entries())
    if (n.length > MAX_NAMESPACE_LENGTH || !ALLOWED_NAMESPACE.test(n))
      return `spec.allowedNamespaces[${i}] ${q(n.slice(0, 100))} must be a namespace name or a glob with * (${ALLOWED_NAMESPACE_PATTERN})`;
  return value;
}

/** The declarations, or a message naming the one at fault. Defaults and types are resolveParams' to check. */
function checkDeclarations(params: unknown): ParamDeclaration[] | string {
  if (params === undefined) return [];
  if (!Array.isArray(params)) return "spec.params must be a list";
  const seen = new Set<string>();
  for (const [i, p] of params.entries()) {
    if (!isRecord(p) || typeof p.name !== "string") return `spec.params[${i}] must have a name`;
    if (!PARAM_NAME.test(p.name))
      return `spec.params[${i}].name ${q(p.name)} must match ${PIPE_PARAM_NAME_PATTERN}`;
    if (RESERVED_PIPE_PARAM_NAMES.includes(p.name))
      return `spec.params[${i}].name ${q(p.name)} is one of the pipe resolver's own request params (${RESERVED_PIPE_PARAM_NAMES.join(", ")})`;
    if (seen.has(p.name)) return `spec.params: param ${q(p.name)} is declared more than once`;
    seen.add(p.name);
  }
  return params as ParamDeclaration[];
}

// ---- pipes ----

export type PipeResult = { ok: true; pipe: CheckedPipe } | PipeFailure;

/** Checks a Pipe as read from the API: its strategy reference, its param values and its entries. */
export function validatePipe(obj: unknown): PipeResult {
  const name = isRecord(obj) ? nameOf(obj) : "";
  const prefix = `Pipe ${q(name)}: `;
  const bad = (message: string) => failure(QuarryReason.InvalidPipe, prefix + message);
  if (!isRecord(obj) || name === "") return bad("not an object with metadata.name");
  const spec = obj.spec;
  if (!isRecord(spec)) return bad("spec is missing");

  const ref = spec.strategy;
  if (!isRecord(ref)) return bad("spec.strategy is missing");
  if (!PIPE_STRATEGY_KINDS.includes(ref.kind as PipeStrategyKind))
    return bad(
      `spec.strategy.kind is ${q(String(ref.kind ?? ""))}; use ${PIPE_STRATEGY_KIND} or ${CLUSTER_PIPE_STRATEGY_KIND}`,
    );
  if (typeof ref.name !== "string" || ref.name === "") return bad("spec.strategy.name is missing");

  const params = checkParamValues(spec.params, "spec.params");
  if (!Array.isArray(params)) return { ...params, message: prefix + params.message };
  const fixed = new Map<string, number>();
  for (const [i, p] of params.entries()) {
    const mark = (p as Param & { fixed?: unknown }).fixed;
    if (mark !== undefined && typeof mark !== "boolean")
      return {
        ok: false,
        reason: QuarryReason.InvalidParamType,
        message: `${prefix}spec.params[${i}].fixed (${q(p.name)}) must be true or false`,
      };
    if (mark === true) fixed.set(p.name, i);
  }

  const entries = validatePipeEntries(spec.pipe, "spec.pipe");
  if (!entries.ok) return { ...entries, message: prefix + entries.message };
  return {
    ok: true,
    pipe: {
      name,
      strategy: { kind: ref.kind as PipeStrategyKind, name: ref.name },
      params: params.map((p) => ({ name: p.name, value: p.value })),
      fixed,
      entries: entries.entries,
    },
  };
}

/** Param values ({name, value}): unique names, Tekton's value shapes. */
export function checkParamValues(params: unknown, field: string): Param[] | PipeFailure {
  if (params === undefined) return [];
  if (!Array.isArray(params)) return failure(QuarryReason.InvalidParamType, `${field} must be a list`);
  const seen = new Set<string>();
  for (const [i, p] of params.entries()) {
    if (!isRecord(p) || typeof p.name !== "string" || p.name === "")
      return failure(QuarryReason.InvalidParamType, `${field}[${i}] must have a name`);
    if (!isParamValue(p.value))
      return failure(
        QuarryReason.InvalidParamType,
        `${field}[${i}] (${q(p.name)}) must be a string, an array of strings or an object of strings`,
      );
    if (seen.has(p.name))
      return failure(QuarryReason.DuplicateParam, `${field}: param ${q(p.name)} is given more than once`);
    seen.add(p.name);
  }
  return params as Param[];
}

export type EntriesResult = { ok: true; entries: PipeEntry[] } | PipeFailure;

/**
 * Checks pipe entries (a Pipe's spec.pipe, or a request's `files`), naming each problem by
 * `field[i]`: one to 64 entries, each exactly one of file/envFile (an absolute, clean path whose
 * base name is a data key), kind Secret or ConfigMap, a key of [a-zA-Z0-9_-] (at most 63
 * characters), unique keys. All failures are InvalidPipe.
 */
export function validatePipeEntries(value: unknown, field: string): EntriesResult {
  const bad = (message: string) => failure(QuarryReason.InvalidPipe, message);
  if (!Array.isArray(value)) return bad(`${field} must be a list of files to pipe, not ${describe(value)}`);
  if (value.length === 0) return bad(`${field} is empty: name at least one file to pipe`);
  if (value.length > MAX_PIPE_ENTRIES)
    return bad(`${field} has ${value.length} entries; at most ${MAX_PIPE_ENTRIES} are allowed`);
  const keys = new Map<string, number>();
  const entries: PipeEntry[] = [];
  for (const [i, e] of value.entries()) {
    const at = `${field}[${i}]`;
    if (!isRecord(e)) return bad(`${at} must be an object with file or envFile, kind and key`);
    const hasFile = e.file !== undefined;
    const hasEnvFile = e.envFile !== undefined;
    if (hasFile === hasEnvFile)
      return bad(`${at} must set exactly one of file or envFile (it sets ${hasFile ? "both" : "neither"})`);
    const format = hasFile ? "file" : "envFile";
    const path = e[format];
    if (typeof path !== "string") return bad(`${at}.${format} must be a string`);
    const problem = pathProblem(path);
    if (problem) return bad(`${at}.${format} ${q(path)} ${problem}`);
    if (!PIPE_OUTPUT_KINDS.includes(e.kind as PipeOutputKind))
      return bad(`${at}.kind is ${q(String(e.kind ?? ""))}; use Secret or ConfigMap`);
    if (typeof e.key !== "string" || e.key === "") return bad(`${at}.key is missing`);
    if (e.key.length > MAX_PIPE_KEY_LENGTH || !KEY.test(e.key))
      return bad(
        `${at}.key ${q(e.key)} must match ${PIPE_KEY_PATTERN} and have at most ${MAX_PIPE_KEY_LENGTH} characters`,
      );
    const earlier = keys.get(e.key);
    if (earlier !== undefined)
      return bad(`${at}.key ${q(e.key)} is also the key of ${field}[${earlier}]; keys must be unique`);
    keys.set(e.key, i);
    entries.push({ [format]: path, kind: e.kind as PipeOutputKind, key: e.key });
  }
  return { ok: true, entries };
}

export type FilesCheck = { ok: true; files: FileToCopy[] } | PipeFailure;

/**
 * The pipe's files against its strategy: every file must lie under the emptyDir the init container
 * mounts. `field` names the entries in messages ("spec.pipe", or `param "files"`), `subject` what
 * holds them (`Pipe "gencert"`, or `request`).
 */
export function checkFiles(
  pipe: CheckedPipe,
  strategy: CheckedStrategy,
  field: string,
  subject: string,
): FilesCheck {
  const result = filesToCopy(pipe.entries, strategy.mount);
  if (result.ok) return result;
  return failure(
    QuarryReason.InvalidPipe,
    `${subject}: ${field}[${result.index}].${result.message} (${strategy.kind} ${q(strategy.name)})`,
  );
}

/** The failure for a Pipe or strategy that does not exist (PipeNotFound, StrategyNotFound). */
export function notFound(
  kind: typeof PIPE_KIND | PipeStrategyKind,
  name: string,
  namespace: string,
): PipeFailure {
  const where = kind === CLUSTER_PIPE_STRATEGY_KIND ? "" : ` in namespace ${q(namespace)}`;
  return failure(
    kind === PIPE_KIND ? QuarryReason.PipeNotFound : QuarryReason.StrategyNotFound,
    `${kind} ${q(name)} does not exist${where}`,
  );
}
