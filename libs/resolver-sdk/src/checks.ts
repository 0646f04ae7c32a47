// Checks on what a resolver returned, before anything is written.
import { MAX_RESOLVED_DATA_BYTES } from "@quarry/api";
import yaml from "js-yaml";

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

/** The resolved bytes must be one YAML (or JSON) document of group tekton.dev and an allowed kind. */
export function checkKind(data: Uint8Array, allowedKinds: readonly string[], what: string): CheckResult {
  let doc: unknown;
  try {
    const docs = yaml
      .loadAll(Buffer.from(data).toString("utf8"))
      .filter((d) => d !== null && d !== undefined);
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
