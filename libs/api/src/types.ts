// Wire shapes of ResolutionRequest (Tekton's own API) and the minimal
// Kubernetes metadata types Quarry reads. Plain JSON shapes: no classes, so a
// watched object can be used as-is.

export const RESOLUTION_GROUP = "resolution.tekton.dev";
export const RESOLUTION_REQUEST_KIND = "ResolutionRequest";
export const RESOLUTION_REQUEST_PLURAL = "resolutionrequests";
export const RESOLUTION_REQUEST_SINGULAR = "resolutionrequest";
export const RESOLUTION_V1BETA1 = "resolution.tekton.dev/v1beta1";
export const RESOLUTION_V1ALPHA1 = "resolution.tekton.dev/v1alpha1";

/** Hard cap on resolved bytes in status.data (etcd's object limit is 1.5 MiB). */
export const MAX_RESOLVED_DATA_BYTES = 1024 * 1024;

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  /** RFC 3339 */
  creationTimestamp?: string;
  /** RFC 3339; set once deletion has been requested. */
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

export type ConditionStatus = "True" | "False" | "Unknown";

/** A knative-style condition (what Tekton writes): no observedGeneration, optional severity. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  /** RFC 3339 */
  lastTransitionTime?: string;
  /** "" (error) | "Warning" | "Info" */
  severity?: string;
}

/** A param value: a string, an array of strings, or an object of strings (Tekton's ParamValue). */
export type ParamValue = string | string[] | Record<string, string>;

export interface Param {
  name: string;
  value: ParamValue;
}

/** Where resolved content came from (Tekton's RefSource). */
export interface RefSource {
  uri: string;
  /** Algorithm → hex digest, e.g. { sha1: "…" } or { sha256: "…" }. */
  digest: Record<string, string>;
  entryPoint?: string;
}

export interface ResolutionRequestSpec {
  params?: Param[];
  /** Alpha in Tekton: a URL naming the resource to resolve. */
  url?: string;
}

export interface ResolutionRequestStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  annotations?: Record<string, string>;
  /** Base64 (standard alphabet) of the resolved bytes. */
  data?: string;
  refSource?: RefSource;
  /** Mirror of refSource for old clients (Tekton's deprecated field). */
  source?: RefSource;
}

/** resolution.tekton.dev/v1beta1 ResolutionRequest: the storage version. */
export interface ResolutionRequest {
  apiVersion: typeof RESOLUTION_V1BETA1;
  kind: typeof RESOLUTION_REQUEST_KIND;
  metadata: ObjectMeta;
  spec: ResolutionRequestSpec;
  status?: ResolutionRequestStatus;
}

export interface ResolutionRequestSpecV1Alpha1 {
  /** v1alpha1 params: a plain string map (the seed's shape). */
  params?: Record<string, string>;
}

/** resolution.tekton.dev/v1alpha1 ResolutionRequest (the seed's shape); status as in v1beta1. */
export interface ResolutionRequestV1Alpha1 {
  apiVersion: typeof RESOLUTION_V1ALPHA1;
  kind: typeof RESOLUTION_REQUEST_KIND;
  metadata: ObjectMeta;
  spec: ResolutionRequestSpecV1Alpha1;
  status?: ResolutionRequestStatus;
}

/** True for the three ParamValue shapes; anything else (numbers, nested objects, null) is not a ParamValue. */
export function isParamValue(value: unknown): value is ParamValue {
  if (typeof value === "string") return true;
  if (Array.isArray(value)) return value.every((v) => typeof v === "string");
  if (value === null || typeof value !== "object") return false;
  return Object.values(value).every((v) => typeof v === "string");
}
