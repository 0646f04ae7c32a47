// The conversion webhook's decision: an apiextensions.k8s.io/v1 ConversionReview in, its response
// out, as a pure function (the TLS server in server.ts only moves bytes). Every object of
// a review converts or none does: the apiserver takes a Failure for the whole request, so nothing
// is ever half-converted.
import {
  isParamValue,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1ALPHA1,
  RESOLUTION_V1BETA1,
  type ResolutionRequest,
  type ResolutionRequestV1Alpha1,
  toV1Alpha1,
  toV1Beta1,
} from "@quarry/api";

export const CONVERSION_REVIEW_API_VERSION = "apiextensions.k8s.io/v1";

export interface ConversionReviewResponse {
  apiVersion: typeof CONVERSION_REVIEW_API_VERSION;
  kind: "ConversionReview";
  response: {
    uid: string;
    convertedObjects: unknown[];
    result: { status: "Success" } | { status: "Failure"; message: string };
  };
}

/** What the HTTP layer answers: 200 with a review, or 400 when the body is no ConversionReview at all. */
export type ReviewOutcome =
  | { status: 200; body: ConversionReviewResponse }
  | { status: 400; body: { message: string } };

const SERVED_VERSIONS = [RESOLUTION_V1ALPHA1, RESOLUTION_V1BETA1] as const;
type ServedVersion = (typeof SERVED_VERSIONS)[number];

export function reviewConversion(body: unknown): ReviewOutcome {
  const request = isRecord(body) ? body.request : undefined;
  if (!isRecord(body) || body.kind !== "ConversionReview" || !isRecord(request)) {
    return { status: 400, body: { message: "expected a ConversionReview with a request" } };
  }
  if (body.apiVersion !== CONVERSION_REVIEW_API_VERSION) {
    return {
      status: 400,
      body: { message: `only ${CONVERSION_REVIEW_API_VERSION} ConversionReviews are served` },
    };
  }
  const uid = typeof request.uid === "string" ? request.uid : "";
  const fail = (message: string): ReviewOutcome => ({
    status: 200,
    body: reviewResponse(uid, { status: "Failure", message }, []),
  });
  if (uid === "") return fail("request.uid is missing");
  const desired = request.desiredAPIVersion;
  if (!isServed(desired))
    return fail(`cannot convert to ${String(desired)}: served are ${SERVED_VERSIONS.join(", ")}`);
  if (!Array.isArray(request.objects)) return fail("request.objects is not a list");
  const converted: unknown[] = [];
  for (const obj of request.objects) {
    const result = convertObject(obj, desired);
    if (typeof result === "string") return fail(`${describe(obj)}: ${result}`);
    converted.push(result);
  }
  return { status: 200, body: reviewResponse(uid, { status: "Success" }, converted) };
}

/** The converted object, or why it cannot be converted. */
function convertObject(obj: unknown, desired: ServedVersion): unknown {
  if (!isRecord(obj)) return "not an object";
  if (obj.kind !== RESOLUTION_REQUEST_KIND)
    return `kind ${String(obj.kind)} is not ${RESOLUTION_REQUEST_KIND}`;
  const from = obj.apiVersion;
  if (!isServed(from)) return `unknown apiVersion ${String(from)}`;
  const where = `converting ${from} to ${desired}`;
  if (from === desired) return obj;
  if (from === RESOLUTION_V1BETA1) {
    const problem = v1beta1Problem(obj);
    return problem ? `${where}: ${problem}` : toV1Alpha1(obj as unknown as ResolutionRequest);
  }
  const problem = v1alpha1Problem(obj);
  return problem ? `${where}: ${problem}` : toV1Beta1(obj as unknown as ResolutionRequestV1Alpha1);
}

// The apiserver validated the object against its version's schema, but the value union of a v1beta1
// param is preserve-unknown-fields there: a value that is no ParamValue would not survive JSON in a string.
function v1beta1Problem(obj: Record<string, unknown>): string | undefined {
  const spec = obj.spec;
  if (spec === undefined) return undefined;
  if (!isRecord(spec)) return "spec is not an object";
  if (spec.url !== undefined && typeof spec.url !== "string") return "spec.url is not a string";
  if (spec.params === undefined) return undefined;
  if (!Array.isArray(spec.params)) return "spec.params is not a list";
  for (const [i, p] of spec.params.entries()) {
    if (!isRecord(p) || typeof p.name !== "string") return `spec.params[${i}] has no name`;
    if (!isParamValue(p.value))
      return `spec.params[${i}] (${p.name}): value must be a string, an array of strings, or an object of strings`;
  }
  return undefined;
}

function v1alpha1Problem(obj: Record<string, unknown>): string | undefined {
  const spec = obj.spec;
  if (spec === undefined) return undefined;
  if (!isRecord(spec)) return "spec is not an object";
  if (spec.params === undefined) return undefined;
  if (!isRecord(spec.params)) return "spec.params is not a map";
  for (const [name, value] of Object.entries(spec.params)) {
    if (typeof value !== "string") return `spec.params.${name} is not a string`;
  }
  return undefined;
}

function reviewResponse(
  uid: string,
  result: ConversionReviewResponse["response"]["result"],
  convertedObjects: unknown[],
): ConversionReviewResponse {
  return {
    apiVersion: CONVERSION_REVIEW_API_VERSION,
    kind: "ConversionReview",
    response: { uid, convertedObjects, result },
  };
}

/** "ResolutionRequest ns/name" (or what is known of it), for a message naming the object. */
function describe(obj: unknown): string {
  const meta = isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : {};
  const kind = isRecord(obj) && typeof obj.kind === "string" ? obj.kind : "object";
  const name =
    typeof meta.name === "string"
      ? meta.name
      : typeof meta.generateName === "string"
        ? `${meta.generateName}*`
        : "<unnamed>";
  return typeof meta.namespace === "string" ? `${kind} ${meta.namespace}/${name}` : `${kind} ${name}`;
}

function isServed(v: unknown): v is ServedVersion {
  return typeof v === "string" && (SERVED_VERSIONS as readonly string[]).includes(v);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
