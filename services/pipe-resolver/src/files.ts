// Which files the pipe resolver copies out of a pipe pod, and the rules on
// their paths: absolute, clean, strictly under the emptyDir mount of the
// strategy's init container, with a base name that is a valid ConfigMap/Secret
// data key (the same rules the Pipe CRD states in CEL, for clusters and
// requests that skip the CRD).
import {
  MAX_DATA_KEY_LENGTH,
  MAX_PIPE_PATH_LENGTH,
  PIPE_FILE_NAME_PATTERN,
  type PipeOutputKind,
} from "@quarry/api";

/** KEP-17's cap: a file over 1 MiB is refused (a ConfigMap or Secret holds at most 1 MiB of data). */
export const MAX_PIPE_FILE_BYTES = 1024 * 1024;

const FILE_NAME = new RegExp(PIPE_FILE_NAME_PATTERN);

/** Where the init container mounts the pod's emptyDir: the only place piped files may come from. */
export interface EmptyDirMount {
  volumeName: string;
  /** As the strategy writes it (the wait container mounts the volume at the same path). */
  mountPath: string;
  subPath?: string;
}

/** One file to copy out of the pod, and where it goes. */
export interface FileToCopy {
  key: string;
  kind: PipeOutputKind;
  /** Absolute path in the pod, under the emptyDir mount. */
  path: string;
  /** `file`: stored whole under dataKey; `envFile`: one data key per KEY=VALUE line. */
  format: "file" | "envFile";
  /** The file's base name: its data key when format is `file`. */
  dataKey: string;
}

/** Why s cannot be a ConfigMap/Secret data key (Kubernetes' IsConfigMapKey), or undefined. */
export function dataKeyProblem(s: string): string | undefined {
  if (s.length === 0) return "is empty";
  if (s.length > MAX_DATA_KEY_LENGTH) return `is longer than ${MAX_DATA_KEY_LENGTH} characters`;
  if (!FILE_NAME.test(s)) return `must match ${PIPE_FILE_NAME_PATTERN}`;
  if (s === "." || s === "..") return `must not be '${s}'`;
  if (s.startsWith("..")) return "must not start with '..'";
  return undefined;
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Why path cannot name a piped file (absolute, clean, a data-key base name), or undefined. */
export function pathProblem(path: string): string | undefined {
  if (path.length > MAX_PIPE_PATH_LENGTH) return `is longer than ${MAX_PIPE_PATH_LENGTH} characters`;
  if (!path.startsWith("/")) return "must be an absolute path";
  if (
    path.endsWith("/") ||
    path
      .split("/")
      .slice(1)
      .some((seg) => seg === "" || seg === "." || seg === "..")
  )
    return "must be a clean path: no empty, '.' or '..' segments and no trailing '/'";
  const problem = dataKeyProblem(baseName(path));
  return problem === undefined ? undefined : `has a file name (after the last '/') that ${problem}`;
}

/** The mount path without trailing slashes and '.' segments ("/out/./x/" → "/out/x"; "/" stays "/"). */
export function cleanMountPath(mountPath: string): string {
  const segments = mountPath.split("/").filter((s) => s !== "" && s !== ".");
  return `/${segments.join("/")}`;
}

/** True when path (clean, absolute) lies strictly below the mount path. */
export function isUnderMount(path: string, mountPath: string): boolean {
  const root = cleanMountPath(mountPath);
  const prefix = root === "/" ? "/" : `${root}/`;
  return path.startsWith(prefix) && path.length > prefix.length;
}

export interface FileEntry {
  file?: string;
  envFile?: string;
  kind: PipeOutputKind;
  key: string;
}

export type FilesResult = { ok: true; files: FileToCopy[] } | { ok: false; index: number; message: string };

/**
 * The files to copy for checked pipe entries: each entry's path must lie under the emptyDir mount
 * (the one rule admission cannot check, since the Pipe and its strategy are two objects). Paths are
 * re-checked too, for entries that never went through the CRD. On failure, `index` is the entry.
 */
export function filesToCopy(entries: readonly FileEntry[], mount: EmptyDirMount): FilesResult {
  const files: FileToCopy[] = [];
  for (const [index, e] of entries.entries()) {
    const format = e.file !== undefined ? "file" : "envFile";
    const path = e.file ?? e.envFile ?? "";
    const problem = pathProblem(path);
    if (problem) return { ok: false, index, message: `${format} ${JSON.stringify(path)} ${problem}` };
    if (!isUnderMount(path, mount.mountPath))
      return {
        ok: false,
        index,
        message: `${format} ${JSON.stringify(path)} is outside the emptyDir volume ${JSON.stringify(mount.volumeName)}, mounted at ${cleanMountPath(mount.mountPath)}`,
      };
    files.push({ key: e.key, kind: e.kind, path, format, dataKey: baseName(path) });
  }
  return { ok: true, files };
}
