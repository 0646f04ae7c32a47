// OpenAPI v3 schemas of the custom-task runs: tekton.dev/v1alpha1 Run and
// tekton.dev/v1beta1 CustomRun. Both are structural CRD schemas; the nodes
// whose shape belongs to someone else (an embedded custom spec, a pod
// template, workspace bindings, a custom task's extra status fields, earlier
// attempts' statuses) preserve unknown fields instead of being typed.
//
// What the schema and its CEL rules reject is a subset of what Tekton's own
// webhook rejects, so nothing Tekton Pipelines writes (a CustomRun it creates
// for a pipeline task, its cancel patch) is refused: exactly one of the
// reference or the embedded spec, each with apiVersion and kind; a
// statusMessage only alongside a status; unique param names; a non-negative Go
// duration as timeout. Two bounds are Quarry's: at most MAX_RUN_PARAMS params
// (the CEL uniqueness rule is quadratic) and `spec.status` limited to the one
// value Tekton defines.
import type { RunFlavour } from "./runs.ts";
import { RUN_SPEC_STATUS_CANCELLED } from "./runs.ts";
import type { JSONSchemaProps, ValidationRule } from "./schema-types.ts";
import {
  conditionsSchema,
  crdRootSchema,
  MAX_PARAMS,
  paramListSchema,
  refSourceSchema,
  stringMapSchema,
} from "./schemas.ts";

/** Bound of `spec.params`: keeps the CEL uniqueness rule within the apiserver's cost limits. */
export const MAX_RUN_PARAMS = 256;
/** Kubernetes' limit for a name (a ServiceAccount's, a result's). */
const MAX_NAME_LENGTH = 253;

/**
 * A non-negative Go duration as time.ParseDuration reads it ("1h0m0s", "90s", "1.5h", "0"),
 * the form metav1.Duration is written in. No sign other than "+": negative timeouts are refused.
 */
export const GO_DURATION_PATTERN = "^[+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$";

const preserved = (description: string): JSONSchemaProps => ({
  type: "object",
  description,
  "x-kubernetes-preserve-unknown-fields": true,
});

const nonEmpty = (description: string): JSONSchemaProps => ({ type: "string", minLength: 1, description });

/** Field names of the reference and the embedded spec in each flavour. */
const FIELDS: Readonly<Record<RunFlavour, { ref: "ref" | "customRef"; spec: "spec" | "customSpec" }>> = {
  Run: { ref: "ref", spec: "spec" },
  CustomRun: { ref: "customRef", spec: "customSpec" },
};

/** A TaskRef as custom-task runs use it: apiVersion and kind required, by name or through a resolver. */
export function runRefSchema(): JSONSchemaProps {
  return {
    type: "object",
    description:
      "The custom task to run: its apiVersion and kind, and either its name or a resolver and the resolver's params.",
    required: ["apiVersion", "kind"],
    properties: {
      apiVersion: nonEmpty("API version of the custom task, e.g. example.dev/v1alpha1."),
      kind: nonEmpty("Kind of the custom task."),
      name: { type: "string", description: "Name of the custom task object, when it is not resolved." },
      bundle: { type: "string", description: "Deprecated in Tekton (use the bundles resolver); preserved." },
      resolver: { type: "string", description: 'Resolver that fetches the definition, e.g. "git".' },
      params: paramListSchema("Params for the resolver. Names are unique.", MAX_PARAMS),
    },
  };
}

export function embeddedRunSpecSchema(): JSONSchemaProps {
  return {
    type: "object",
    description: "A custom task's spec embedded in the run: its apiVersion, kind and spec.",
    required: ["apiVersion", "kind"],
    properties: {
      apiVersion: nonEmpty("API version of the custom task."),
      kind: nonEmpty("Kind of the custom task."),
      metadata: {
        type: "object",
        description: "Labels and annotations for what the custom task creates.",
        properties: {
          labels: stringMapSchema("Labels."),
          annotations: stringMapSchema("Annotations."),
        },
      },
      spec: preserved("The custom task's own spec; its controller validates it."),
    },
  };
}

/** The spec's CEL rules, worded with the flavour's field names. */
function runSpecRules(flavour: RunFlavour): ValidationRule[] {
  const { ref, spec } = FIELDS[flavour];
  return [
    {
      rule: `has(self.${ref}) || has(self.${spec})`,
      message: `a ${flavour} needs spec.${ref} (a reference to a custom task) or spec.${spec} (an embedded one)`,
    },
    {
      rule: `!(has(self.${ref}) && has(self.${spec}))`,
      message: `spec.${ref} and spec.${spec} are mutually exclusive: set exactly one`,
    },
    {
      rule: "!has(self.statusMessage) || size(self.statusMessage) == 0 || (has(self.status) && size(self.status) > 0)",
      message: `statusMessage may only be set together with status (e.g. status: ${RUN_SPEC_STATUS_CANCELLED})`,
      fieldPath: ".statusMessage",
    },
  ];
}

export function runSpecSchema(flavour: RunFlavour): JSONSchemaProps {
  const { ref, spec } = FIELDS[flavour];
  const properties: Record<string, JSONSchemaProps> = {
    [ref]: runRefSchema(),
    [spec]: embeddedRunSpecSchema(),
    params: paramListSchema(
      `Params passed to the custom task. Names are unique; at most ${MAX_RUN_PARAMS}.`,
      MAX_RUN_PARAMS,
    ),
    status: {
      type: "string",
      description: `${RUN_SPEC_STATUS_CANCELLED} asks the run's controller to stop it.`,
      // "" is what an unset status reads as in Tekton's Go types; accepted as unset.
      enum: ["", RUN_SPEC_STATUS_CANCELLED],
    },
    statusMessage: { type: "string", description: "Why the run was cancelled; only with status." },
    retries: {
      type: "integer",
      minimum: 0,
      description: "How many times the custom task may retry a failed run.",
    },
    serviceAccountName: {
      type: "string",
      maxLength: MAX_NAME_LENGTH,
      description: 'ServiceAccount the custom task acts as ("" for the default).',
    },
    timeout: {
      type: "string",
      pattern: GO_DURATION_PATTERN,
      description: 'A non-negative Go duration, e.g. "1h0m0s"; "0" or "0s" means no timeout.',
    },
    workspaces: {
      type: "array",
      description: "Workspace bindings passed to the custom task.",
      "x-kubernetes-list-type": "atomic",
      items: {
        type: "object",
        description: "A WorkspaceBinding: a name and the volume source that backs it.",
        required: ["name"],
        properties: { name: { type: "string", description: "The workspace's name." } },
        "x-kubernetes-preserve-unknown-fields": true,
      },
    },
  };
  if (flavour === "Run") properties.podTemplate = preserved("A Tekton PodTemplate for what the run creates.");
  return {
    type: "object",
    description: `What the ${flavour} executes and how.`,
    properties,
    "x-kubernetes-validations": runSpecRules(flavour),
  };
}

export function runStatusSchema(flavour: RunFlavour): JSONSchemaProps {
  return {
    type: "object",
    description: `The ${flavour}'s outcome, written by its custom task's controller.`,
    properties: {
      conditions: conditionsSchema("Succeeded: Unknown while running, then True or False."),
      observedGeneration: { type: "integer", format: "int64" },
      annotations: stringMapSchema("Additional status written by the controller."),
      startTime: { type: "string", format: "date-time" },
      completionTime: { type: "string", format: "date-time" },
      results: {
        type: "array",
        description: "String results, for later pipeline tasks.",
        "x-kubernetes-list-type": "atomic",
        items: {
          type: "object",
          required: ["name", "value"],
          properties: {
            name: { type: "string" },
            value: { type: "string" },
          },
        },
      },
      retriesStatus: {
        type: "array",
        description: `Statuses of earlier attempts, each shaped like this status.`,
        "x-kubernetes-list-type": "atomic",
        items: preserved("A status of an earlier attempt."),
      },
      extraFields: {
        description: "Anything else the custom task's controller records.",
        "x-kubernetes-preserve-unknown-fields": true,
      },
      childReferences: {
        type: "array",
        description: "Quarry: what this run created (e.g. its ResolutionRequest), by reference.",
        "x-kubernetes-list-type": "atomic",
        items: {
          type: "object",
          required: ["apiVersion", "kind", "name"],
          properties: {
            apiVersion: { type: "string" },
            kind: { type: "string" },
            name: { type: "string" },
            pipelineTaskName: { type: "string" },
          },
        },
      },
      provenance: {
        type: "object",
        description: "Quarry: where the run's definition came from.",
        properties: { refSource: refSourceSchema("The resolved definition's source and digest.") },
      },
    },
  };
}

/** Root schema of the CRD version serving `flavour` (v1alpha1 Run or v1beta1 CustomRun). */
export function runSchema(flavour: RunFlavour): JSONSchemaProps {
  return crdRootSchema({
    description:
      flavour === "Run"
        ? "An execution of a custom task (Tekton's v1alpha1 Run)."
        : "An execution of a custom task (Tekton's v1beta1 CustomRun).",
    spec: runSpecSchema(flavour),
    status: runStatusSchema(flavour),
    specRequired: true,
  });
}
