// CRD and admission-policy objects built from the schemas, and their YAML
// rendering. gen-crds.ts writes the YAML to libs/api/crds/; crds.test.ts fails
// when the committed files drift from what this module produces.
import { dump } from "js-yaml";
import { admissionPolicy, type Manifest } from "./admission-policy.ts";
import { singleVersionCrd } from "./crd-builder.ts";
import type { CustomResourceDefinition, PrinterColumn, WebhookClientConfig } from "./crd-types.ts";
import {
  ADMISSION_POLICY_DISABLED,
  ANNOTATION_REASON,
  LABEL_ADMISSION_POLICY,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
  RESOLVER_NAME_ALIASES,
} from "./labels.ts";
import {
  CLUSTER_PIPE_STRATEGY_CRD_NAME,
  clusterPipeStrategyCrd,
  PIPE_CRD_NAME,
  PIPE_STRATEGY_CRD_NAME,
  pipeCrd,
  pipeStrategyCrd,
} from "./pipe-crds.ts";
import { QuarryReason } from "./reasons.ts";
import { resolutionRequests } from "./resources.ts";
import { CUSTOM_RUN_CRD_NAME, customRunCrd, RUN_CRD_NAME, RUN_CRDS_SUBDIR, runCrd } from "./run-crds.ts";
import { resolutionRequestSchema, resolutionRequestV1Alpha1Schema } from "./schemas.ts";
import { shardPolicies } from "./shard-policy.ts";
import { RESOLUTION_GROUP, RESOLUTION_REQUEST_PLURAL } from "./types.ts";

export const RESOLUTION_REQUEST_CRD_NAME = `${RESOLUTION_REQUEST_PLURAL}.${RESOLUTION_GROUP}`;
export const RESOLVER_LABEL_POLICY_NAME = "quarry-resolutionrequest-resolver-label";

export type { Manifest } from "./admission-policy.ts";

const SUCCEEDED_PATH = '.status.conditions[?(@.type=="Succeeded")]';
const RESOLUTION_REQUEST_COLUMNS: PrinterColumn[] = [
  { name: "Succeeded", type: "string", jsonPath: `${SUCCEEDED_PATH}.status` },
  { name: "Reason", type: "string", jsonPath: `${SUCCEEDED_PATH}.reason` },
  // Dots inside a label key are escaped in the apiserver's JSONPath.
  {
    name: "Resolver",
    type: "string",
    jsonPath: `.metadata.labels.${LABEL_RESOLVER_TYPE.replaceAll(".", "\\.")}`,
  },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
];

// Only v1beta1 is served by default: serving v1alpha1 needs the lifecycle controller's conversion
// webhook, see resolutionRequestCrdWithConversion.
export function resolutionRequestCrd(): CustomResourceDefinition {
  return singleVersionCrd(resolutionRequests, {
    categories: ["tekton", "tekton-pipelines"],
    columns: RESOLUTION_REQUEST_COLUMNS,
    schema: resolutionRequestSchema(),
    statusSubresource: true,
  });
}

/** The Service the chart's conversion CRD names until its values say otherwise (charts/quarry-crds). */
export const CONVERSION_WEBHOOK_SERVICE = {
  name: "quarry-lifecycle-controller-webhook",
  namespace: "quarry-system",
  path: "/convert",
  port: 443,
} as const;

/**
 * The ResolutionRequest CRD serving v1alpha1 too (v1beta1 stays the storage version), converted by
 * the lifecycle controller's webhook at `clientConfig` (apiextensions.k8s.io/v1 ConversionReviews).
 * The CA bundle is left out: the controller (or cert-manager's cainjector) injects it.
 */
export function resolutionRequestCrdWithConversion(
  clientConfig: WebhookClientConfig = { service: { ...CONVERSION_WEBHOOK_SERVICE } },
): CustomResourceDefinition {
  const crd = resolutionRequestCrd();
  const v1beta1 = crd.spec.versions[0]!;
  crd.spec.versions = [
    {
      name: "v1alpha1",
      served: true,
      storage: false,
      subresources: { status: {} },
      additionalPrinterColumns: RESOLUTION_REQUEST_COLUMNS,
      schema: { openAPIV3Schema: resolutionRequestV1Alpha1Schema() },
    },
    v1beta1,
  ];
  crd.spec.conversion = {
    strategy: "Webhook",
    webhook: { conversionReviewVersions: ["v1"], clientConfig },
  };
  return crd;
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

/** The finer reasons the lifecycle controller itself writes, when it ends a request no resolver did. */
export const LIFECYCLE_REASONS = [
  QuarryReason.MissingResolverLabel,
  QuarryReason.NoResolver,
  QuarryReason.TimedOut,
] as const;

/**
 * RBAC cannot tell a request's conditions from its data: both live in the
 * status subresource. This policy makes the apiserver itself hold the
 * lifecycle controller to "conditions only": it may not change a request's
 * spec, resolved data, refSource, source or resolvers' annotations; of the
 * annotations it may only set quarry.dev/reason, and only to one of its own
 * reasons (LIFECYCLE_REASONS), so a failure it writes is as machine-readable
 * as a resolver's.
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
        expression: [
          ...["data", "refSource", "source"].map(unchanged),
          annotationsUnchangedBut(ANNOTATION_REASON, "object", "oldObject"),
          annotationsUnchangedBut(ANNOTATION_REASON, "oldObject", "object"),
          reasonIsOneOf(LIFECYCLE_REASONS),
        ].join(" && "),
        message:
          "the lifecycle controller writes conditions only (and its own quarry.dev/reason): status.data, annotations, refSource and source belong to resolvers",
        reason: "Forbidden",
      },
    ],
  });
}

export const LIFECYCLE_DELETES_POLICY_NAME = "quarry-lifecycle-controller-deletes";

/**
 * The lifecycle controller deletes completed requests once their
 * completed-request-ttl passed (services/lifecycle-controller cleanup.ts).
 * RBAC grants delete on every request; this policy has the apiserver refuse
 * it the deletion of one that is not completed, so a bug cannot delete a
 * request a resolver is still working on.
 */
export function lifecycleDeletesPolicy(): Manifest[] {
  return admissionPolicy({
    name: LIFECYCLE_DELETES_POLICY_NAME,
    operations: ["DELETE"],
    resources: [RESOLUTION_REQUEST_PLURAL],
    matchConditions: [
      {
        name: "is-lifecycle-controller",
        expression: `request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${LIFECYCLE_SERVICE_ACCOUNT}')`,
      },
    ],
    validations: [
      {
        expression:
          "has(oldObject.status) && has(oldObject.status.conditions) && oldObject.status.conditions.exists(c, c.type == 'Succeeded' && (c.status == 'True' || c.status == 'False'))",
        message: "the lifecycle controller deletes only completed ResolutionRequests",
        reason: "Forbidden",
      },
    ],
  });
}

/**
 * Each resolver's ServiceAccount (charts/<service>/rbac.yaml; the name is fixed, the namespace is
 * the install's) → the one canonical type it serves. `quarry-resolver-template` is
 * examples/resolver-template's (a toy `http` resolver): a copy of the template run under that name
 * is held to its type too, and never shares the real http resolver's ServiceAccount.
 */
export const RESOLVER_SERVICE_ACCOUNTS: Readonly<Record<string, string>> = Object.freeze({
  "quarry-git-resolver": "git",
  "quarry-bundle-resolver": "bundles",
  "quarry-cluster-resolver": "cluster",
  "quarry-pipe-resolver": "pipe",
  "quarry-http-resolver": "http",
  "quarry-hub-resolver": "hub",
  "quarry-resolver-template": "http",
});

/** A canonical resolver type and the alias names that mean it (`bundles`, `bundle`): what its informer selects. */
export function resolverTypeNames(type: string): string[] {
  return [type, ...Object.keys(RESOLVER_NAME_ALIASES).filter((a) => RESOLVER_NAME_ALIASES[a] === type)];
}

/** The status-write policy of the resolver running as ServiceAccount `serviceAccount`. */
export function resolverWritesPolicyName(serviceAccount: string): string {
  return `${serviceAccount}-writes`;
}

/**
 * RBAC grants every resolver `patch` on the status of every ResolutionRequest: it cannot tell a
 * git request from a bundles one. This policy has the apiserver deny an update (status or main
 * resource) by resolver `serviceAccount` of a request whose type, before and after, is not one of
 * its own, so a resolver that is compromised or wrong cannot answer (or fail) another resolver's
 * requests. The type is read as every service reads it (labels.ts resolverTypeOf): the canonical
 * label when non-empty, else the seed's alias label, whose values may be alias names.
 *
 * The user is matched by name in any namespace (as the lifecycle policies are): the namespace is
 * the install's, unknown here, and a same-named ServiceAccount elsewhere only gets the same limit.
 * A process that hosts several resolvers must run under a ServiceAccount of another name.
 */
export function resolverWritesPolicy(serviceAccount: string, type: string): Manifest[] {
  const names = resolverTypeNames(type);
  const list = `[${names.map((n) => `'${n}'`).join(", ")}]`;
  const typeOf = (o: string) => {
    const label = (key: string) =>
      `has(${o}.metadata.labels) && '${key}' in ${o}.metadata.labels && ${o}.metadata.labels['${key}'] != ''`;
    return `((${label(LABEL_RESOLVER_TYPE)}) ? ${o}.metadata.labels['${LABEL_RESOLVER_TYPE}'] : ((${label(LABEL_RESOLVER_ALIAS)}) ? ${o}.metadata.labels['${LABEL_RESOLVER_ALIAS}'] : ''))`;
  };
  const aliases = names.slice(1);
  const typesText = aliases.length > 0 ? `${type} (or its alias ${aliases.join(", ")})` : type;
  return admissionPolicy({
    name: resolverWritesPolicyName(serviceAccount),
    operations: ["UPDATE"],
    resources: [RESOLUTION_REQUEST_PLURAL, `${RESOLUTION_REQUEST_PLURAL}/status`],
    matchConditions: [
      {
        name: `is-${serviceAccount}`,
        expression: `request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${serviceAccount}')`,
      },
    ],
    variables: [
      { name: "oldType", expression: typeOf("oldObject") },
      { name: "newType", expression: typeOf("object") },
    ],
    validations: [
      {
        expression: `variables.oldType in ${list} && variables.newType in ${list}`,
        message: `ServiceAccount ${serviceAccount} writes only ResolutionRequests of type ${typesText} (label ${LABEL_RESOLVER_TYPE}, or ${LABEL_RESOLVER_ALIAS} when that is empty): this request belongs to another resolver`,
        reason: "Forbidden",
      },
    ],
  });
}

/** Every resolver's status-write policy, in RESOLVER_SERVICE_ACCOUNTS' order. */
export function resolverWritesPolicies(): Manifest[] {
  return Object.entries(RESOLVER_SERVICE_ACCOUNTS).flatMap(([sa, type]) => resolverWritesPolicy(sa, type));
}

const HEADER = [
  "# Generated by libs/api/src/gen-crds.ts from the schemas and CRD builders in libs/api/src. Do not edit:",
  "# change the TypeScript and run `node libs/api/src/gen-crds.ts`.",
];

/** Apart from the top level, which installers apply as a whole: the chart picks this file by a value. */
export const CONVERSION_CRDS_SUBDIR = "conversion";

const CONVERSION_CRDS_NOTE = [
  "# ResolutionRequest serving v1alpha1 through the lifecycle controller's conversion webhook: the",
  "# quarry-crds chart uses this file with resolutionRequests.conversionWebhook.enabled=true and sets",
  "# clientConfig.service from its values (docs/operator-guide.md, Serving v1alpha1).",
];

/** Apart from the top level: needs MutatingAdmissionPolicy (admissionregistration.k8s.io/v1beta1). */
export const SHARD_POLICY_SUBDIR = "shard";

const SHARD_POLICY_NOTE = [
  "# Optional: stamps quarry.dev/shard on ResolutionRequests so each replica watches only its buckets'",
  "# (docs/operator-guide.md §5). Needs admissionregistration.k8s.io/v1beta1",
  "# MutatingAdmissionPolicy (Kubernetes 1.34+ with the MutatingAdmissionPolicy feature gate on).",
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
    [`${CONVERSION_CRDS_SUBDIR}/${RESOLUTION_REQUEST_CRD_NAME}.yaml`]: toYaml(
      [resolutionRequestCrdWithConversion()],
      CONVERSION_CRDS_NOTE,
    ),
    "resolutionrequest-policy.yaml": toYaml([
      ...resolverLabelPolicy(),
      ...lifecycleWritesPolicy(),
      ...lifecycleDeletesPolicy(),
      ...resolverWritesPolicies(),
    ]),
    [`${SHARD_POLICY_SUBDIR}/resolutionrequest-shard-policy.yaml`]: toYaml(
      shardPolicies(),
      SHARD_POLICY_NOTE,
    ),
    [`${PIPE_CRD_NAME}.yaml`]: toYaml([pipeCrd()]),
    [`${PIPE_STRATEGY_CRD_NAME}.yaml`]: toYaml([pipeStrategyCrd()]),
    [`${CLUSTER_PIPE_STRATEGY_CRD_NAME}.yaml`]: toYaml([clusterPipeStrategyCrd()]),
    [`${RUN_CRDS_SUBDIR}/${RUN_CRD_NAME}.yaml`]: toYaml([runCrd()], RUN_CRDS_NOTE),
    [`${RUN_CRDS_SUBDIR}/${CUSTOM_RUN_CRD_NAME}.yaml`]: toYaml([customRunCrd()], RUN_CRDS_NOTE),
  };
}

/** Every status annotation of `a` but `key` is in `b` with the same value (CEL; both directions make "unchanged"). */
function annotationsUnchangedBut(key: string, a: string, b: string): string {
  const inB = `has(${b}.status) && has(${b}.status.annotations) && k in ${b}.status.annotations && ${b}.status.annotations[k] == ${a}.status.annotations[k]`;
  return `(!has(${a}.status) || !has(${a}.status.annotations) || ${a}.status.annotations.all(k, k == '${key}' || (${inB})))`;
}

/** quarry.dev/reason is unchanged, or one of `reasons` (CEL). */
function reasonIsOneOf(reasons: readonly string[]): string {
  const key = `'${ANNOTATION_REASON}'`;
  const now = `has(object.status) && has(object.status.annotations) && ${key} in object.status.annotations`;
  const before = `has(oldObject.status) && has(oldObject.status.annotations) && ${key} in oldObject.status.annotations`;
  const same = `(${before} && oldObject.status.annotations[${key}] == object.status.annotations[${key}])`;
  const list = reasons.map((r) => `'${r}'`).join(", ");
  return `(!(${now}) || ${same} || object.status.annotations[${key}] in [${list}])`;
}
