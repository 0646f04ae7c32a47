// Does an existing request ask for the same thing as the caller? The name is a
// hash, so two different asks can (very rarely) share it, and anyone with
// write access can edit a request; before adopting one we compare what it
// actually asks for. Comparison follows the name hash's own notion of
// sameness (params as a set keyed by name, object keys unordered, array order
// significant) but is stricter where the hash is ambiguous: the string
// '["a"]' and the array ["a"] hash alike and are different asks here.
import {
  canonicalResolverName,
  goJsonMarshal,
  type Param,
  type ParamValue,
  type ResolutionRequest,
  resolverTypeOf,
} from "@quarry/api";

export interface WantedRequest {
  resolverType: string;
  params: readonly Param[];
  url?: string | undefined;
}

/** A comparable key for a value: its kind and Go's JSON bytes (sorted object keys). */
function valueKey(value: ParamValue): string {
  if (typeof value === "string") return `s:${value}`;
  return Array.isArray(value) ? `a:${goJsonMarshal(value)}` : `o:${goJsonMarshal(value)}`;
}

function byName(params: readonly Param[] | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of params ?? []) {
    const keys = out.get(p.name) ?? [];
    keys.push(valueKey(p.value));
    out.set(p.name, keys);
  }
  for (const keys of out.values()) keys.sort();
  return out;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/**
 * How two param lists differ, one line per param name (sorted), empty when they ask the same.
 * Values are never quoted: a param may name a Secret or carry a token-bearing URL.
 */
export function paramDifferences(
  existing: readonly Param[] | undefined,
  wanted: readonly Param[] | undefined,
): string[] {
  const a = byName(existing);
  const b = byName(wanted);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  const out: string[] = [];
  for (const name of names) {
    const ka = a.get(name);
    const kb = b.get(name);
    if (!kb) out.push(`param "${name}" only in the existing request`);
    else if (!ka) out.push(`param "${name}" missing from the existing request`);
    else if (!sameKeys(ka, kb)) out.push(`param "${name}" has another value`);
  }
  return out;
}

/**
 * Everything that makes `existing` a different ask from `wanted`: resolver type (aliases such
 * as `bundle` count as their canonical name, on both sides), params and url ("" = absent).
 */
export function requestDifferences(existing: ResolutionRequest, wanted: WantedRequest): string[] {
  const out: string[] = [];
  const existingType = resolverTypeOf(existing.metadata.labels).type;
  const wantedType = canonicalResolverName(wanted.resolverType);
  if (existingType === undefined) out.push("the existing request has no resolver label");
  else if (existingType !== wantedType)
    out.push(`resolver type "${existingType}" instead of "${wantedType}"`);
  out.push(...paramDifferences(existing.spec?.params, wanted.params));
  if ((existing.spec?.url ?? "") !== (wanted.url ?? "")) out.push("url differs");
  return out;
}
