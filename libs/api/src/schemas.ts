// OpenAPI v3 schemas of ResolutionRequest v1beta1, valid as a structural CRD
// schema (every node typed, except the one preserve-unknown-fields node) and
// cheap enough for the apiserver's CEL cost estimator (every list and string a
// CEL rule walks has a bound).
//
// spec.params[].value is a string, an array of strings or an object of strings.
// A structural schema cannot express that union (no `type` inside anyOf), so
// the CRD only preserves the value and controllers check it with ajv, through
// the stricter schema controllerSpecSchema() builds.
import type { JSONSchemaProps } from "./schema-types.ts";

/** Bounds the CEL uniqueness rule's O(n²) cost; Tekton resolvers take a handful of params. */
export const MAX_PARAMS = 128;
/** Kubernetes' limit for a name-like string. */
export const MAX_PARAM_NAME_LENGTH = 253;
export const MAX_CONDITIONS = 16;

export const PARAM_VALUE_MESSAGE = "must be a string, an array of strings, or an object of strings";

/** What a CRD version's root schema holds besides the object envelope (apiVersion, kind, metadata). */
export interface CrdRootParts {
  description: string;
  spec: JSONSchemaProps;
  /** Left out for kinds without a status. */
  status?: JSONSchemaProps;
  /** Whether an object without a spec is refused. */
  specRequired?: boolean;
}

/** Root schema of a CRD version: apiVersion, kind and metadata (the apiserver checks metadata), spec and status. */
export function crdRootSchema(parts: CrdRootParts): JSONSchemaProps {
  return {
    type: "object",
    description: parts.description,
    ...(parts.specRequired ? { required: ["spec"] } : {}),
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: parts.spec,
      ...(parts.status ? { status: parts.status } : {}),
    },
  };
}

export const stringMapSchema = (description: string): JSONSchemaProps => ({
  type: "object",
  description,
  additionalProperties: { type: "string" },
});

export const refSourceSchema = (description: string): JSONSchemaProps => ({
  type: "object",
  description,
  properties: {
    uri: { type: "string", description: "Where the content came from, e.g. git+https://host/repo.git." },
    digest: stringMapSchema('Algorithm to hex digest, e.g. {"sha1": "<hex>"}.'),
    entryPoint: { type: "string", description: "Path or name inside the source." },
  },
});

/**
 * A list of Tekton params ({name, value}; value a string, an array or an object of strings),
 * with unique names. Shared by ResolutionRequest's spec and a run's params and ref params.
 * `maxItems` bounds the CEL uniqueness rule's O(n²) cost.
 */
export function paramListSchema(description: string, maxItems: number = MAX_PARAMS): JSONSchemaProps {
  return {
    type: "array",
    description,
    maxItems,
    "x-kubernetes-list-type": "atomic",
    items: {
      type: "object",
      required: ["name", "value"],
      properties: {
        name: { type: "string", minLength: 1, maxLength: MAX_PARAM_NAME_LENGTH },
        value: {
          description: "A string, an array of strings, or an object of strings.",
          "x-kubernetes-preserve-unknown-fields": true,
        },
      },
    },
    "x-kubernetes-validations": [
      {
        rule: "self.all(p, self.exists_one(q, q.name == p.name))",
        message: "param names must be unique",
        // No reason: FieldValueDuplicate would make the apiserver print `Duplicate value: "array"`
        // and drop this message.
      },
    ],
  };
}

/** Knative-style conditions (what Tekton writes), one per type. */
export function conditionsSchema(description: string): JSONSchemaProps {
  return {
    type: "array",
    description,
    maxItems: MAX_CONDITIONS,
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
    items: {
      type: "object",
      required: ["type", "status"],
      properties: {
        type: { type: "string" },
        status: { type: "string", enum: ["True", "False", "Unknown"] },
        reason: { type: "string" },
        message: { type: "string" },
        lastTransitionTime: { type: "string", format: "date-time" },
        severity: { type: "string" },
      },
    },
  };
}

export function resolutionRequestSpecSchema(): JSONSchemaProps {
  return {
    type: "object",
    description: "What to resolve: params for the resolver named by the resolution.tekton.dev/type label.",
    properties: {
      params: paramListSchema("Runtime parameters for the resolver. Names are unique."),
      url: { type: "string", description: "A URL naming the resource to resolve (alpha in Tekton)." },
    },
  };
}

export function resolutionRequestStatusSchema(): JSONSchemaProps {
  return {
    type: "object",
    description: "Outcome of the request.",
    properties: {
      conditions: conditionsSchema("Succeeded: Unknown while resolving, then True or False."),
      observedGeneration: { type: "integer", format: "int64" },
      annotations: stringMapSchema("Resolver metadata, and Quarry's finer reason under quarry.dev/reason."),
      data: { type: "string", description: "Base64 (standard) of the resolved bytes." },
      refSource: refSourceSchema("Where the resolved content came from."),
      source: refSourceSchema("Deprecated mirror of refSource, for old clients."),
    },
  };
}

/**
 * Root schema of the v1alpha1 CRD version (the seed's shape, served only through the lifecycle
 * controller's conversion webhook): params a plain string map, no url; status as in v1beta1.
 */
export function resolutionRequestV1Alpha1Schema(): JSONSchemaProps {
  return crdRootSchema({
    description: "A request to a resolver (v1alpha1: params as a string map; stored as v1beta1).",
    spec: {
      type: "object",
      description: "What to resolve: params for the resolver named by the resolution.tekton.dev/type label.",
      properties: {
        params: {
          ...stringMapSchema(
            "Runtime parameters for the resolver. An array or object value of v1beta1 reads as its JSON encoding.",
          ),
          maxProperties: MAX_PARAMS,
        },
      },
    },
    status: resolutionRequestStatusSchema(),
  });
}

/** Root schema of the v1beta1 CRD version. */
export function resolutionRequestSchema(): JSONSchemaProps {
  return crdRootSchema({
    description: "A request to a resolver for the content of a remote resource, e.g. a Task's YAML.",
    spec: resolutionRequestSpecSchema(),
    status: resolutionRequestStatusSchema(),
  });
}

/**
 * The spec schema controllers validate with: the CRD's, plus the param value union that a
 * structural schema cannot state. `quarryMessage` replaces ajv's per-branch errors with one line.
 */
export function controllerSpecSchema(): JSONSchemaProps {
  const schema = resolutionRequestSpecSchema();
  const props = schema.properties?.params?.items?.properties;
  if (props?.value) {
    // Not a fresh literal, so the keys JSONSchemaProps lacks (anyOf, quarryMessage) are allowed.
    const strictValue = {
      ...props.value,
      anyOf: [
        { type: "string" },
        { type: "array", items: { type: "string" } },
        { type: "object", additionalProperties: { type: "string" } },
      ],
      quarryMessage: PARAM_VALUE_MESSAGE,
    };
    props.value = strictValue;
  }
  return schema;
}
