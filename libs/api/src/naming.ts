// Tekton's deterministic ResolutionRequest names (GenerateDeterministicNameFromSpec
// in tektoncd/pipeline pkg/resolution/resource/name.go), reproduced byte for
// byte so Quarry and Tekton Pipelines find, and adopt, each other's requests.
//
// name = prefix + "-" + hex(FNV-128a(base ‖ for each param sorted by name:
//        name ‖ value ‖ url)), where value is the string itself or Go's
//        json.Marshal of an array/object, and url is hashed only when non-empty.
// Everything is one FNV stream, with no separators. The prefix (the resolver
// type) is cut to 30 bytes so the 32-character hash always fits in 63.
import { Fnv128a } from "./fnv.ts";
import { compareGoStrings, goJsonMarshal } from "./gojson.ts";
import type { Param, ResolutionRequestSpec } from "./types.ts";

/** DNS-1123 label limit, which Tekton applies to request names. */
export const MAX_REQUEST_NAME_LENGTH = 63;
const HASH_HEX_LENGTH = 32;
const MAX_PREFIX_BYTES = MAX_REQUEST_NAME_LENGTH - HASH_HEX_LENGTH - 1;

/** Tekton's GenerateDeterministicNameFromSpec. Never throws; any of prefix, base and spec may be empty. */
export function deterministicRequestName(
  prefix: string,
  base: string,
  spec?: Pick<ResolutionRequestSpec, "params" | "url">,
): string {
  const h = new Fnv128a().update(base);
  if (spec) {
    // Array.prototype.sort is stable, like Go's sort.SliceStable.
    const sorted = [...(spec.params ?? [])].sort((a, b) => compareGoStrings(a.name, b.name));
    for (const p of sorted) h.update(p.name).update(paramBytes(p));
    if (spec.url) h.update(spec.url);
  }
  // Go slices the prefix by bytes; request prefixes are ASCII resolver names.
  const prefixBytes = Buffer.from(prefix, "utf8");
  const cut =
    prefixBytes.length > MAX_PREFIX_BYTES
      ? prefixBytes.subarray(0, MAX_PREFIX_BYTES).toString("utf8")
      : prefix;
  return `${cut}-${h.hex()}`;
}

function paramBytes(p: Param): string {
  return typeof p.value === "string" ? p.value : goJsonMarshal(p.value);
}

export interface RequestNameInput {
  /** Resolver type (the label value), Tekton's prefix: e.g. "git". */
  resolverType: string;
  /** Namespace of the owner (and of the request). */
  namespace: string;
  /** Name of the owner (the TaskRun, PipelineRun, Run, …) or an explicit name. */
  name: string;
  spec?: Pick<ResolutionRequestSpec, "params" | "url">;
}

/**
 * The name Tekton gives the request for an owner: base is "<namespace>/<name>". Tekton falls back
 * to the namespace "default" when none is given; Quarry throws instead, since a request always
 * lives in its owner's namespace and an empty one here is a caller bug.
 */
export function requestNameFor(input: RequestNameInput): string {
  if (!input.namespace) throw new Error("requestNameFor: namespace must not be empty");
  if (!input.name) throw new Error("requestNameFor: name must not be empty");
  return deterministicRequestName(input.resolverType, `${input.namespace}/${input.name}`, input.spec);
}
