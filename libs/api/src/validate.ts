// ajv validators for ResolutionRequest spec and status. Errors are one line
// each and start with the offending field ("spec.params[1].value: …"), since
// they end up in a request's status message for a user to act on.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { controllerSpecSchema, resolutionRequestStatusSchema } from "./schemas.ts";
import type { ResolutionRequestSpec, ResolutionRequestStatus } from "./types.ts";

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

// Kubernetes' own keywords are annotations to ajv; registering them (instead of strict: false)
// keeps strict mode's protection against misspelt keywords.
const ANNOTATION_KEYWORDS = [
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-int-or-string",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
  "quarryMessage",
];

let compiled: { spec: ValidateFunction; status: ValidateFunction } | undefined;

// Compiled on first use, so importing @quarry/api stays cheap.
function validators(): { spec: ValidateFunction; status: ValidateFunction } {
  if (compiled) return compiled;
  const ajv = new Ajv({
    allErrors: true,
    verbose: true, // puts parentSchema on errors, where quarryMessage lives
    strict: true,
    // Kubernetes' formats; the apiserver checks them, controllers only need the shape.
    formats: { "date-time": true, int64: true },
  });
  for (const keyword of ANNOTATION_KEYWORDS)
    ajv.addKeyword({ keyword, schemaType: ["boolean", "string", "array"] });
  compiled = {
    spec: ajv.compile(controllerSpecSchema()),
    status: ajv.compile(resolutionRequestStatusSchema()),
  };
  return compiled;
}

/** Checks a v1beta1 spec as the CRD would, plus the param value union and unique param names. */
export function validateResolutionRequestSpec(
  spec: unknown,
  path = "spec",
): ValidationResult<ResolutionRequestSpec> {
  const validate = validators().spec;
  const errors = validate(spec) ? [] : formatErrors(validate.errors ?? [], path);
  if (errors.length === 0) errors.push(...duplicateParamErrors(spec as ResolutionRequestSpec, path));
  return errors.length === 0 ? { ok: true, value: spec as ResolutionRequestSpec } : { ok: false, errors };
}

export function validateResolutionRequestStatus(
  status: unknown,
  path = "status",
): ValidationResult<ResolutionRequestStatus> {
  const validate = validators().status;
  if (validate(status)) return { ok: true, value: status as ResolutionRequestStatus };
  return { ok: false, errors: formatErrors(validate.errors ?? [], path) };
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
