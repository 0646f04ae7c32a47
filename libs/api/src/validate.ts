// Validators for ResolutionRequest spec and status: ajv's standalone code, compiled from
// schemas.ts at build time (scripts/gen-validators.ts, which holds the ajv options), so that no
// service loads ajv. Errors are one line each and start with the offending field
// ("spec.params[1].value: …"), since they end up in a request's status message for a user to act on.
import type { ErrorObject } from "ajv";
import { validateSpec, validateStatus } from "./generated/validators.js";
import type { ResolutionRequestSpec, ResolutionRequestStatus } from "./types.ts";

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** Checks a v1beta1 spec as the CRD would, plus the param value union and unique param names. */
export function validateResolutionRequestSpec(
  spec: unknown,
  path = "spec",
): ValidationResult<ResolutionRequestSpec> {
  const errors = validateSpec(spec) ? [] : formatErrors(validateSpec.errors ?? [], path);
  if (errors.length === 0) errors.push(...duplicateParamErrors(spec as ResolutionRequestSpec, path));
  return errors.length === 0 ? { ok: true, value: spec as ResolutionRequestSpec } : { ok: false, errors };
}

export function validateResolutionRequestStatus(
  status: unknown,
  path = "status",
): ValidationResult<ResolutionRequestStatus> {
  if (validateStatus(status)) return { ok: true, value: status as ResolutionRequestStatus };
  return { ok: false, errors: formatErrors(validateStatus.errors ?? [], path) };
}

// The CRD's CEL rule, repeated for objects that never went through an apiserver.
function duplicateParamErrors(spec: ResolutionRequestSpec, path: string): string[] {
  const seen = new Set<string>();
  const errors: string[] = [];
  (spec.params ?? []).forEach((p, i) => {
    if (seen.has(p.name))
      errors.push(`${path}.params[${i}].name: duplicate param name ${JSON.stringify(p.name)}`);
    seen.add(p.name);
  });
  return errors;
}

/** JSON pointer "/params/0/name" → "spec.params[0].name". */
function fieldPath(root: string, pointer: string): string {
  let out = root;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function formatErrors(errors: readonly ErrorObject[], root: string): string[] {
  // An anyOf carrying quarryMessage speaks for all of its branches' errors.
  const summarized = errors.filter(
    (e) => e.keyword === "anyOf" && typeof e.parentSchema?.quarryMessage === "string",
  );
  const lines = new Set<string>();
  for (const e of errors) {
    const branchOfSummary = summarized.some(
      (s) =>
        s !== e && e.schemaPath.startsWith(`${s.schemaPath}/`) && e.instancePath.startsWith(s.instancePath),
    );
    if (branchOfSummary) continue;
    lines.add(formatError(e, root));
  }
  return [...lines];
}

function formatError(e: ErrorObject, root: string): string {
  const at = fieldPath(root, e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return `${fieldPath(root, `${e.instancePath}/${String(params.missingProperty)}`)}: is required`;
    case "anyOf":
      if (typeof e.parentSchema?.quarryMessage === "string") return `${at}: ${e.parentSchema.quarryMessage}`;
      break;
    case "enum":
      return `${at}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  }
  return `${at}: ${e.message ?? "is invalid"}`;
}
