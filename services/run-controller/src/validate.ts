// What a run's spec must be for anyone to act on it: the rules Quarry's CRD
// enforces at admission (CEL), checked again here because a cluster may run
// Tekton's own CRDs, which admit anything. A run that breaks them and that no
// controller has picked up fails at once with a specific reason instead of
// waiting for the initial-update timeout.
import { type AnyRun, RUN_SPEC_STATUS_CANCELLED, refFieldName, runView } from "@quarry/api";

export const ReasonInvalidRunSpec = "InvalidRunSpec";

/** Same bound as the CRD's (and far above what any pipeline passes). */
export const MAX_RUN_PARAMS = 256;

/** The first problem found, as a message naming the field; undefined when the spec is usable. */
export function runSpecProblem(run: AnyRun): string | undefined {
  const view = runView(run);
  const fields = refFieldName(view.flavour);
  if (view.ref && view.embedded) return `${fields.ref} and ${fields.spec} are both set; set exactly one`;
  if (!view.ref && !view.embedded) return `neither ${fields.ref} nor ${fields.spec} is set; set exactly one`;
  const where = view.ref ? fields.ref : fields.spec;
  if (!view.target.apiVersion) return `${where}.apiVersion is required`;
  if (!view.target.kind) return `${where}.kind is required`;
  const status = run.spec?.status;
  if (status !== undefined && status !== "" && status !== RUN_SPEC_STATUS_CANCELLED)
    return `spec.status "${String(status).slice(0, 64)}" is not "${RUN_SPEC_STATUS_CANCELLED}" (the only value it takes)`;
  if (run.spec?.statusMessage && !status) return "spec.statusMessage is set but spec.status is not";
  const params = run.spec?.params;
  if (params !== undefined && !Array.isArray(params)) return "spec.params must be a list of {name, value}";
  if (params && params.length > MAX_RUN_PARAMS)
    return `spec.params has ${params.length} entries; at most ${MAX_RUN_PARAMS} are allowed`;
  const seen = new Set<string>();
  for (const p of params ?? []) {
    if (typeof p?.name !== "string" || !p.name) return "spec.params: every param needs a name";
    if (seen.has(p.name)) return `spec.params: "${p.name.slice(0, 64)}" is given more than once`;
    seen.add(p.name);
  }
  return undefined;
}
