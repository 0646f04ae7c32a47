// Create-or-adopt a ResolutionRequest under Tekton's deterministic name.
//
// The name is a function of (resolver type, namespace/base name, params, url),
// so whoever asks first creates the request and everyone asking the same
// thing later (another Run, a retry after a crash, Tekton Pipelines itself)
// lands on it with a 409 and adopts it instead of resolving twice.
import {
  ANNOTATION_TRACEPARENT,
  LABEL_RESOLVER_TYPE,
  type OwnerReference,
  type Param,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
  type ResolutionRequest,
  type ResolutionRequestSpec,
  requestNameFor,
  resolutionRequests,
} from "@quarry/api";
import { isApiError, type KubeClient, lockedMergePatch } from "@quarry/kube";
import { activeContext, currentTraceparent, withSpan } from "@quarry/observability";
import { RequestMismatchError, RequestTerminatingError } from "./errors.ts";
import { controllerRef, withSharedOwner } from "./owners.ts";
import { requestDifferences } from "./spec.ts";

export interface RequestResolutionInput {
  /** Namespace of the request, which is the owner's namespace (ownerReferences cannot cross namespaces). */
  namespace: string;
  /** Resolver type: the name prefix and the `resolution.tekton.dev/type` label, kept as given (as Tekton does). */
  resolverType: string;
  params: readonly Param[];
  /** spec.url (alpha in Tekton); hashed into the name only when non-empty, like Tekton. */
  url?: string;
  /** The object the request is for (a Run, TaskRun, …): controller owner on create, extra owner on adopt. */
  owner?: OwnerReference;
  /**
   * Name hashed with the namespace as "<namespace>/<baseName>" (Tekton hashes the owner's name).
   * Defaults to owner.name; required when there is no owner.
   */
  baseName?: string;
  /** Extra labels, set on create only. The resolver-type label always wins. */
  labels?: Record<string, string>;
  /** Extra annotations, set on create only. An explicit `traceparent` here beats the active context's. */
  annotations?: Record<string, string>;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The request a caller would create (no I/O): deterministic name, type label, controller owner,
 * and the active OpenTelemetry context's `traceparent` so resolvers continue the caller's trace.
 */
export function buildRequest(input: RequestResolutionInput): ResolutionRequest {
  const { namespace, resolverType, owner } = input;
  // The type becomes the name's prefix; fail here rather than with the apiserver's 422 on the name.
  if (!DNS_LABEL.test(resolverType))
    throw new TypeError(`requestResolution: resolverType "${resolverType}" is not a DNS-1123 label`);
  const baseName = input.baseName ?? owner?.name;
  if (!baseName) throw new TypeError("requestResolution: baseName is required when there is no owner");
  const spec: ResolutionRequestSpec = { params: structuredClone([...input.params]) };
  if (input.url) spec.url = input.url;
  const annotations = { ...input.annotations };
  const traceparent = currentTraceparent();
  if (traceparent && annotations[ANNOTATION_TRACEPARENT] === undefined)
    annotations[ANNOTATION_TRACEPARENT] = traceparent;
  const rr: ResolutionRequest = {
    apiVersion: RESOLUTION_V1BETA1,
    kind: RESOLUTION_REQUEST_KIND,
    metadata: {
      name: requestNameFor({ resolverType, namespace, name: baseName, spec }),
      namespace,
      labels: { ...input.labels, [LABEL_RESOLVER_TYPE]: resolverType },
    },
    spec,
  };
  if (Object.keys(annotations).length) rr.metadata.annotations = annotations;
  if (owner) rr.metadata.ownerReferences = [controllerRef(owner)];
  return rr;
}

/** How often create→409→get→404 may repeat (the request deleted under us) before giving up. */
const MAX_CREATE_ATTEMPTS = 3;

/**
 * Creates the request, or adopts the one already under its name: checks that it asks for the
 * same thing (else RequestMismatchError) and adds `owner` as an extra, non-controller owner.
 * Returns the request as stored. Throws RequestTerminatingError if it is being deleted.
 */
export async function requestResolution(
  client: KubeClient,
  input: RequestResolutionInput,
): Promise<ResolutionRequest> {
  // The request is built inside the span: its traceparent annotation names this span, so the
  // lifecycle controller's and the resolver's spans hang under the create that caused them.
  const attributes = { "quarry.resolver": input.resolverType, "quarry.namespace": input.namespace };
  return withSpan("resolution.request", activeContext(), attributes, async (span) => {
    const desired = buildRequest(input);
    span.setAttribute("quarry.request", `${input.namespace}/${desired.metadata.name}`);
    const { stored, adopted } = await createOrAdopt(client, input, desired);
    // adopted: someone asked first, and the resolution runs in their trace
    span.setAttribute("quarry.adopted", adopted);
    return stored;
  });
}

async function createOrAdopt(
  client: KubeClient,
  input: RequestResolutionInput,
  desired: ResolutionRequest,
): Promise<{ stored: ResolutionRequest; adopted: boolean }> {
  const name = desired.metadata.name!;
  for (let attempt = 1; attempt <= MAX_CREATE_ATTEMPTS; attempt++) {
    try {
      return { stored: await client.create(resolutionRequests, desired), adopted: false };
    } catch (err) {
      if (!isApiError(err, 409)) throw err;
    }
    let existing: ResolutionRequest;
    try {
      existing = await client.get<ResolutionRequest>(resolutionRequests, input.namespace, name);
    } catch (err) {
      if (isApiError(err, 404)) continue; // deleted between our create and get: create again
      throw err;
    }
    const adopted = await adopt(client, existing, input);
    if (adopted) return { stored: adopted, adopted: true };
  }
  throw new RequestTerminatingError(input.namespace, name, "kept disappearing between create and adopt");
}

/** Verifies and joins an existing request; undefined if it vanished meanwhile. */
async function adopt(
  client: KubeClient,
  existing: ResolutionRequest,
  input: RequestResolutionInput,
): Promise<ResolutionRequest | undefined> {
  const verify = (rr: ResolutionRequest) => {
    const name = rr.metadata.name ?? "";
    const differences = requestDifferences(rr, input);
    if (differences.length) throw new RequestMismatchError(input.namespace, name, differences);
    // The garbage collector is removing it; an owner added now would not save it.
    if (rr.metadata.deletionTimestamp)
      throw new RequestTerminatingError(input.namespace, name, "is being deleted");
  };
  const owner = input.owner;
  if (!owner) {
    verify(existing);
    return existing;
  }
  let latest = existing;
  let unchanged = false;
  const patched = await lockedMergePatch(client, resolutionRequests, existing, (rr) => {
    // Re-checked on every conflict retry: what we adopt is the version we patch.
    verify(rr);
    latest = rr;
    const ownerReferences = withSharedOwner(rr.metadata.ownerReferences, owner);
    unchanged = ownerReferences === undefined;
    return ownerReferences ? { metadata: { ownerReferences } } : undefined;
  });
  if (patched) return patched;
  return unchanged ? latest : undefined;
}
