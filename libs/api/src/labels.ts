// Label and annotation keys shared by every Quarry service, and the one rule
// for reading a request's resolver type from its labels.

/** Canonical resolver label (Tekton's): its value names the resolver that owns a request. */
export const LABEL_RESOLVER_TYPE = "resolution.tekton.dev/type";
/** The seed's resolver label, accepted as an alias; the lifecycle controller rewrites it to the canonical one. */
export const LABEL_RESOLVER_ALIAS = "resolution.tekton.dev/resolver";

/** Set on objects made for a pipe (pods, ConfigMaps, Secrets): the Pipe's name. */
export const LABEL_PIPE = "quarry.dev/pipe";
/** Set on objects made while serving a ResolutionRequest: the request's name. */
export const LABEL_REQUEST = "quarry.dev/request";
/**
 * Stamped on a ResolutionRequest at admission by Quarry's MutatingAdmissionPolicy (where the
 * cluster serves it): the shard of its name (shard.ts), so a replica watches only its buckets'.
 */
export const LABEL_SHARD = "quarry.dev/shard";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const MANAGED_BY_QUARRY = "quarry";
/** Namespace label that exempts a namespace from Quarry's ValidatingAdmissionPolicy binding. */
export const LABEL_ADMISSION_POLICY = "quarry.dev/admission-policy";
export const ADMISSION_POLICY_DISABLED = "disabled";

/** status.annotations key: Quarry's finer reason (a QuarryReason) next to Tekton's coarse condition reason. */
export const ANNOTATION_REASON = "quarry.dev/reason";
/** status.annotations key: set by a resolver when it picks a request up (value: the resolver's identity). */
export const ANNOTATION_ACCEPTED_BY = "quarry.dev/accepted-by";
/** metadata.annotations key: W3C trace context stamped by the requester so every service joins one trace. */
export const ANNOTATION_TRACEPARENT = "traceparent";
/** status.annotations key: media type of status.data (Tekton's key). */
export const ANNOTATION_CONTENT_TYPE = "resolution.tekton.dev/content-type";
/**
 * metadata.annotations key on a v1alpha1 view of a request: what the v1alpha1 shape cannot hold
 * (spec.url, names of JSON-encoded params), so converting back to v1beta1 loses nothing.
 */
export const ANNOTATION_V1BETA1_SPEC = "quarry.dev/v1beta1-spec";

/**
 * Annotation key prefixes Quarry reserves: never propagated from a PipeStrategy to a pipe pod
 * (with `kubectl.kubernetes.io/last-applied-configuration`).
 */
export const RESERVED_ANNOTATION_PREFIXES: readonly string[] = [
  "quarry.dev/",
  "pipe.quarry.dev/",
  "pipestrategy.quarry.dev/",
  "clusterpipestrategy.quarry.dev/",
  "resolution.tekton.dev/",
];

/** Written by `kubectl apply`; never propagated from a PipeStrategy to a pipe pod. */
export const ANNOTATION_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
/** metadata.annotations key on a piped ConfigMap/Secret: the pipe entry's key it holds. */
export const ANNOTATION_PIPE_KEY = "quarry.dev/pipe-key";

/** The seed's resolver names that differ from Tekton's; mapped to the canonical name. */
export const RESOLVER_NAME_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  bundle: "bundles",
  "in-cluster": "cluster",
});

/** Maps an alias resolver name (`bundle`, `in-cluster`) to its canonical name; other names pass through. */
export function canonicalResolverName(name: string): string {
  const trimmed = name.trim();
  return Object.hasOwn(RESOLVER_NAME_ALIASES, trimmed) ? RESOLVER_NAME_ALIASES[trimmed]! : trimmed;
}

export interface ResolverTypeLookup {
  /** Canonical resolver type, or undefined when neither label holds a non-blank value. */
  type: string | undefined;
  /**
   * True unless the canonical label already holds exactly `type` (so also true when no type was
   * found). With a type, it means "patch the canonical label to `type`".
   */
  canonicalLabelMissingOrWrong: boolean;
}

function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * Reads a request's resolver type: the canonical label first, then the alias label; blank values
 * count as missing, whitespace is trimmed and alias names are mapped to canonical ones.
 */
export function resolverTypeOf(labels: Record<string, string> | undefined): ResolverTypeLookup {
  const canonicalRaw = labels?.[LABEL_RESOLVER_TYPE];
  const picked = nonBlank(canonicalRaw) ?? nonBlank(labels?.[LABEL_RESOLVER_ALIAS]);
  const type = picked === undefined ? undefined : canonicalResolverName(picked);
  return { type, canonicalLabelMissingOrWrong: type === undefined || canonicalRaw !== type };
}
