// Pure conversions between v1alpha1 (params as a string map: the seed's shape)
// and v1beta1 (params as a list of {name, value}: Tekton's storage version),
// for the lifecycle controller's conversion webhook.
//
// v1alpha1 cannot hold a non-string param value nor spec.url. Tekton refuses
// such a conversion; Quarry instead JSON-encodes array/object values into the
// string map (so a v1alpha1 reader still sees them) and records what it did,
// plus spec.url, in the annotation quarry.dev/v1beta1-spec, so converting back
// restores the v1beta1 object exactly. A kube conversion must round-trip, or an
// update through the old version silently drops data.
import { ANNOTATION_V1BETA1_SPEC } from "./labels.ts";
import {
  isParamValue,
  type ObjectMeta,
  type Param,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1ALPHA1,
  RESOLUTION_V1BETA1,
  type ResolutionRequest,
  type ResolutionRequestSpec,
  type ResolutionRequestSpecV1Alpha1,
  type ResolutionRequestV1Alpha1,
} from "./types.ts";

/** What a v1alpha1 object cannot hold, kept in the ANNOTATION_V1BETA1_SPEC annotation. */
export interface V1Beta1SpecExtras {
  url?: string;
  /** Names of params whose v1alpha1 string is the JSON encoding of an array or object value. */
  jsonParams?: string[];
  /**
   * The v1beta1 list's order of param names, when it is not sorted: the apiserver serialises a
   * v1alpha1 map with sorted keys, so a list's own order would otherwise be lost on the way back.
   */
  order?: string[];
}

export function specToV1Alpha1(spec: ResolutionRequestSpec): {
  spec: ResolutionRequestSpecV1Alpha1;
  extras: V1Beta1SpecExtras | undefined;
} {
  const jsonParams: string[] = [];
  let params: Record<string, string> | undefined;
  for (const p of spec.params ?? []) {
    params ??= {};
    // A later duplicate wins, as in Tekton's conversion (the CRD's CEL rule forbids duplicates anyway).
    if (typeof p.value === "string") {
      params[p.name] = p.value;
    } else {
      params[p.name] = JSON.stringify(p.value);
      jsonParams.push(p.name);
    }
  }
  const extras: V1Beta1SpecExtras = {};
  if (spec.url !== undefined) extras.url = spec.url;
  if (jsonParams.length > 0) extras.jsonParams = jsonParams;
  const order = [...new Set((spec.params ?? []).map((p) => p.name))];
  if (order.some((name, i) => i > 0 && order[i - 1]! > name)) extras.order = order;
  return {
    spec: params === undefined ? {} : { params },
    extras: Object.keys(extras).length > 0 ? extras : undefined,
  };
}

export function specToV1Beta1(
  spec: ResolutionRequestSpecV1Alpha1,
  extras?: V1Beta1SpecExtras,
): ResolutionRequestSpec {
  const jsonNames = new Set(extras?.jsonParams ?? []);
  const out: ResolutionRequestSpec = {};
  if (spec.params !== undefined) {
    const entries = Object.entries(spec.params);
    const rank = new Map((extras?.order ?? []).map((name, i) => [name, i]));
    // names the order does not know (added by a v1alpha1 client) keep their map order, after the rest
    if (rank.size > 0) entries.sort(([a], [b]) => (rank.get(a) ?? rank.size) - (rank.get(b) ?? rank.size));
    out.params = entries.map(([name, value]): Param => {
      return { name, value: jsonNames.has(name) ? decodeJsonValue(value) : value };
    });
  }
  if (extras?.url !== undefined) out.url = extras.url;
  return out;
}

export function toV1Alpha1(rr: ResolutionRequest): ResolutionRequestV1Alpha1 {
  const { spec, extras } = specToV1Alpha1(rr.spec ?? {});
  const metadata = withExtras(structuredClone(rr.metadata ?? {}), extras);
  const out: ResolutionRequestV1Alpha1 = {
    apiVersion: RESOLUTION_V1ALPHA1,
    kind: RESOLUTION_REQUEST_KIND,
    metadata,
    spec,
  };
  if (rr.status !== undefined) out.status = structuredClone(rr.status);
  return out;
}

export function toV1Beta1(rr: ResolutionRequestV1Alpha1): ResolutionRequest {
  const metadata = structuredClone(rr.metadata ?? {});
  const extras = parseExtras(metadata.annotations?.[ANNOTATION_V1BETA1_SPEC]);
  const spec = specToV1Beta1(rr.spec ?? {}, extras);
  const out: ResolutionRequest = {
    apiVersion: RESOLUTION_V1BETA1,
    kind: RESOLUTION_REQUEST_KIND,
    metadata: withExtras(metadata, undefined),
    spec,
  };
  if (rr.status !== undefined) out.status = structuredClone(rr.status);
  return out;
}

// A v1alpha1 client may have rewritten a JSON-encoded param as a plain string: keep it a string then.
function decodeJsonValue(value: string): Param["value"] {
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== "string" && isParamValue(parsed)) return parsed;
  } catch {
    // not JSON: a plain string
  }
  return value;
}

function parseExtras(raw: string | undefined): V1Beta1SpecExtras | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed === null || typeof parsed !== "object") return undefined;
    const { url, jsonParams, order } = parsed as Record<string, unknown>;
    const extras: V1Beta1SpecExtras = {};
    if (typeof url === "string") extras.url = url;
    if (Array.isArray(jsonParams)) extras.jsonParams = jsonParams.filter((n) => typeof n === "string");
    if (Array.isArray(order)) extras.order = order.filter((n) => typeof n === "string");
    return extras;
  } catch {
    return undefined; // a hand-edited, unreadable annotation restores nothing
  }
}

// Sets (or, with no extras, removes) the annotation; drops an emptied annotations map.
function withExtras(metadata: ObjectMeta, extras: V1Beta1SpecExtras | undefined): ObjectMeta {
  const annotations = { ...metadata.annotations };
  if (extras === undefined) delete annotations[ANNOTATION_V1BETA1_SPEC];
  else annotations[ANNOTATION_V1BETA1_SPEC] = JSON.stringify(extras);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return metadata;
}
