// Checks on what a resolver returned, before anything is written.
import { MAX_RESOLVED_DATA_BYTES } from "@quarry/api";
import { loadAllMeasured } from "./yaml-expansion.ts";

export const DEFAULT_ALLOWED_KINDS: readonly string[] = [
  "Task",
  "Pipeline",
  "StepAction",
  "TaskRun",
  "PipelineRun",
  "Run",
  "CustomRun",
];

export type CheckResult =
  | { ok: true }
  | { ok: false; reason: "TooLarge" | "UnsupportedKind"; message: string };

export function checkSize(data: Uint8Array, what: string): CheckResult {
  if (data.byteLength <= MAX_RESOLVED_DATA_BYTES) return { ok: true };
  return {
    ok: false,
    reason: "TooLarge",
    message: `${what} is ${data.byteLength} bytes, over the 1 MiB limit for resolved data`,
  };
}

/**
 * The resolved bytes must be one YAML (or JSON) document of group tekton.dev and an allowed kind,
 * within the size limit also once its aliases are expanded (TooLarge).
 */
export function checkKind(data: Uint8Array, allowedKinds: readonly string[], what: string): CheckResult {
  let doc: unknown;
  try {
    const parsed = loadAllMeasured(Buffer.from(data).toString("utf8"), MAX_RESOLVED_DATA_BYTES);
    const { bytes, aliases, unbounded } = parsed.expansion;
    if (bytes > MAX_RESOLVED_DATA_BYTES) {
      const how = unbounded
        ? "without end (an alias inside the node it names)"
        : `to at least ${bytes} bytes`;
      return {
        ok: false,
        reason: "TooLarge",
        message: `${what} expands ${how} through ${aliases} YAML aliases, over the 1 MiB limit for resolved data (consumers expand aliases)`,
      };
    }
    const docs = parsed.docs.filter((d) => d !== null && d !== undefined);
    if (docs.length !== 1) {
      return {
        ok: false,
        reason: "UnsupportedKind",
        message: `${what} holds ${docs.length} YAML documents, expected one`,
      };
    }
    doc = docs[0];
  } catch (err) {
    return {
      ok: false,
      reason: "UnsupportedKind",
      message: `${what} is not YAML: ${(err as Error).message.split("\n")[0]}`,
    };
  }
  const obj = (doc ?? {}) as { apiVersion?: unknown; kind?: unknown };
  const group = typeof obj.apiVersion === "string" ? obj.apiVersion.split("/")[0] : undefined;
  const kind = typeof obj.kind === "string" ? obj.kind : undefined;
  if (group === "tekton.dev" && kind && allowedKinds.includes(kind)) return { ok: true };
  return {
    ok: false,
    reason: "UnsupportedKind",
    message: `${what} is ${kind ?? "no kind"} (apiVersion ${String(obj.apiVersion ?? "none")}), not a tekton.dev ${allowedKinds.join(", ")}`,
  };
}
