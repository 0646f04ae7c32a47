// CRD and admission-policy objects built from the schemas, and their YAML
// rendering. gen-crds.ts writes the YAML to libs/api/crds/; crds.test.ts fails
// when the committed files drift from what this module produces.
import { dump } from "js-yaml";
import {
  ADMISSION_POLICY_DISABLED,
  LABEL_ADMISSION_POLICY,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
} from "./labels.ts";
import {
  CLUSTER_PIPE_STRATEGY_CRD_NAME,
  clusterPipeStrategyCrd,
  PIPE_CRD_NAME,
  PIPE_STRATEGY_CRD_NAME,
  pipeCrd,
  pipeStrategyCrd,
} from "./pipe-crds.ts";
import { CUSTOM_RUN_CRD_NAME, customRunCrd, RUN_CRD_NAME, RUN_CRDS_SUBDIR, runCrd } from "./run-crds.ts";
import type { JSONSchemaProps } from "./schema-types.ts";
import { resolutionRequestSchema } from "./schemas.ts";
import {
  RESOLUTION_GROUP,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_REQUEST_PLURAL,
  RESOLUTION_REQUEST_SINGULAR,
} from "./types.ts";

export const RESOLUTION_REQUEST_CRD_NAME = `${RESOLUTION_REQUEST_PLURAL}.${RESOLUTION_GROUP}`;
export const RESOLVER_LABEL_POLICY_NAME = "quarry-resolutionrequest-resolver-label";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      categories?: string[];
      shortNames?: string[];
    };
    scope: "Namespaced" | "Cluster";
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: Record<string, never> };
      additionalPrinterColumns?: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}

/** A manifest object with the two fields every Kubernetes object has; the rest stays open. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  [field: string]: unknown;
}

const PART_OF = { "app.kubernetes.io/part-of": "quarry" };

// Only v1beta1 is served: serving v1alpha1 needs a conversion webhook (strategy Webhook with the
// lifecycle controller's service and CA bundle), which a chart must template; the conversion
// functions in conversion.ts are ready for it.
export function resolutionRequestCrd(): CustomResourceDefinition {
  const succeeded = '.status.conditions[?(@.type=="Succeeded")]';
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: RESOLUTION_REQUEST_CRD_NAME, labels: { ...PART_OF } },
    spec: {
      group: RESOLUTION_GROUP,
      names: {
        kind: RESOLUTION_REQUEST_KIND,
        listKind: `${RESOLUTION_REQUEST_KIND}List`,
        plural: RESOLUTION_REQUEST_PLURAL,
        singular: RESOLUTION_REQUEST_SINGULAR,
        categories: ["tekton", "tekton-pipelines"],
      },
      scope: "Namespaced",
      versions: [
        {
          name: "v1beta1",
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: "Succeeded", type: "string", jsonPath: `${succeeded}.status` },
            { name: "Reason", type: "string", jsonPath: `${succeeded}.reason` },
            // Dots inside a label key are escaped in the apiserver's JSONPath.
            {
              name: "Resolver",
              type: "string",
              jsonPath: `.metadata.labels.${LABEL_RESOLVER_TYPE.replaceAll(".", "\\.")}`,
            },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: { openAPIV3Schema: resolutionRequestSchema() },
        },
      ],
    },
  };
}

/**
 * Rejects, at admission and without a webhook server, a ResolutionRequest created with no
 * resolver label. The lifecycle controller still fails such a request (ResolutionFailed), since not every
 * cluster installs the policy; namespaces labelled quarry.dev/admission-policy=disabled are exempt.
 */
export function resolverLabelPolicy(): Manifest[] {
  const nonEmpty = (key: string) =>
    `'${key}' in object.metadata.labels && object.metadata.labels['${key}'] != ''`;
  return admissionPolicy({
    name: RESOLVER_LABEL_POLICY_NAME,
    operations: ["CREATE"],
    resources: [RESOLUTION_REQUEST_PLURAL],
    validations: [
      {
        expression: `has(object.metadata.labels) && ((${nonEmpty(LABEL_RESOLVER_TYPE)}) || (${nonEmpty(LABEL_RESOLVER_ALIAS)}))`,
        message: `a ResolutionRequest needs the label ${LABEL_RESOLVER_TYPE} (or its alias ${LABEL_RESOLVER_ALIAS}) naming its resolver`,
        reason: "Invalid",
      },
    ],
    namespaceSelector: {
      matchExpressions: [
        { key: LABEL_ADMISSION_POLICY, operator: "NotIn", values: [ADMISSION_POLICY_DISABLED] },
      ],
    },
  });
}

export const LIFECYCLE_WRITES_POLICY_NAME = "quarry-lifecycle-controller-writes";
/** The lifecycle controller's ServiceAccount name, in whatever namespace it is installed. */
export const LIFECYCLE_SERVICE_ACCOUNT = "quarry-lifecycle-controller";

/**
 * RBAC cannot tell a request's conditions from its data: both live in the
 * status subresource. This policy makes the apiserver itself hold the
 * lifecycle controller to "conditions only": it may not change a request's
 * spec, resolved data, annotations or refSource.
 */
export function lifecycleWritesPolicy(): Manifest[] {
  const unchanged = (field: string) => {
    const now = `has(object.status) && has(object.status.${field})`;
    const before = `has(oldObject.status) && has(oldObject.status.${field})`;
    return `((${now}) ? ((${before}) && object.status.${field} == oldObject.status.${field}) : !(${before}))`;
  };
  return admissionPolicy({
    name: LIFECYCLE_WRITES_POLICY_NAME,
    operations: ["UPDATE"],
    resources: [RESOLUTION_REQUEST_PLURAL, `${RESOLUTION_REQUEST_PLURAL}/status`],
    matchConditions: [
      {
        name: "is-lifecycle-controller",
        expression: `request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${LIFECYCLE_SERVICE_ACCOUNT}')`,
      },
    ],
    validations: [
      {
        expression: "object.spec == oldObject.spec",
        message: "the lifecycle controller may not change a ResolutionRequest's spec",
        reason: "Forbidden",
      },
      {
        expression: ["data", "annotations", "refSource", "source"].map(unchanged).join(" && "),
        message:
          "the lifecycle controller writes conditions only: status.data, annotations, refSource and source belong to resolvers",
        reason: "Forbidden",
      },
    ],
  });
}

interface AdmissionPolicySpec {
  name: string;
  operations: string[];
  resources: string[];
  validations: { expression: string; message: string; reason: string }[];
  matchConditions?: { name: string; expression: string }[];
  namespaceSelector?: Record<string, unknown>;
}

/** A ValidatingAdmissionPolicy on ResolutionRequests and its Deny binding. */
function admissionPolicy(p: AdmissionPolicySpec): Manifest[] {
  const metadata = { name: p.name, labels: { ...PART_OF } };
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata,
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [RESOLUTION_GROUP],
              apiVersions: ["*"],
              operations: p.operations,
              resources: p.resources,
            },
          ],
        },
        ...(p.matchConditions ? { matchConditions: p.matchConditions } : {}),
        validations: p.validations,
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata,
      spec: {
        policyName: p.name,
        validationActions: ["Deny"],
        ...(p.namespaceSelector ? { matchResources: { namespaceSelector: p.namespaceSelector } } : {}),
      },
    },
  ];
}

const HEADER = [
  "# Generated by libs/api/src/gen-crds.ts from the schemas and CRD builders in libs/api/src. Do not edit:",
  "# change the TypeScript and run `node libs/api/src/gen-crds.ts`.",
];

const RUN_CRDS_NOTE = [
  "# Optional: Tekton Pipelines owns customruns.tekton.dev (and, before v0.47, runs.tekton.dev).",
  "# Install this only on a cluster without Tekton Pipelines; Quarry also works on Tekton's own CRD.",
];

/** Multi-document YAML, stable byte for byte for the same input; `note` adds comment lines to the header. */
export function toYaml(objects: readonly object[], note: readonly string[] = []): string {
  const docs = objects.map((o) => dump(o, { noRefs: true, lineWidth: -1, sortKeys: false }));
  return `${[...HEADER, ...note].join("\n")}\n${docs.map((d) => `---\n${d}`).join("")}`;
}

/**
 * File name (relative to libs/api/crds/) → content, as the generator writes them. The run CRDs
 * go to a subdirectory, which an installer applying libs/api/crds/*.yaml skips.
 */
export function generatedFiles(): Record<string, string> {
  return {
    [`${RESOLUTION_REQUEST_CRD_NAME}.yaml`]: toYaml([resolutionRequestCrd()]),
    "resolutionrequest-policy.yaml": toYaml([...resolverLabelPolicy(), ...lifecycleWritesPolicy()]),
    [`${PIPE_CRD_NAME}.yaml`]: toYaml([pipeCrd()]),
    [`${PIPE_STRATEGY_CRD_NAME}.yaml`]: toYaml([pipeStrategyCrd()]),
    [`${CLUSTER_PIPE_STRATEGY_CRD_NAME}.yaml`]: toYaml([clusterPipeStrategyCrd()]),
    [`${RUN_CRDS_SUBDIR}/${RUN_CRD_NAME}.yaml`]: toYaml([runCrd()], RUN_CRDS_NOTE),
    [`${RUN_CRDS_SUBDIR}/${CUSTOM_RUN_CRD_NAME}.yaml`]: toYaml([customRunCrd()], RUN_CRDS_NOTE),
  };
}
