// The policies behind quarry.dev/shard: a MutatingAdmissionPolicy stamps each
// named ResolutionRequest with the shard of its name, and a
// ValidatingAdmissionPolicy refuses any other value, so a replica that selects
// its buckets' shards in its watch (QUARRY_SHARD_LABEL) can trust the label.
import { admissionPolicy, type Manifest } from "./admission-policy.ts";
import { PART_OF } from "./crd-builder.ts";
import { ADMISSION_POLICY_DISABLED, LABEL_ADMISSION_POLICY, LABEL_SHARD } from "./labels.ts";
import { shardCel } from "./shard.ts";
import { RESOLUTION_GROUP, RESOLUTION_REQUEST_PLURAL } from "./types.ts";

export const SHARD_POLICY_NAME = "quarry-resolutionrequest-shard";

const OPT_OUT = {
  matchExpressions: [{ key: LABEL_ADMISSION_POLICY, operator: "NotIn", values: [ADMISSION_POLICY_DISABLED] }],
};

/** The shard of `object`'s name as the label's string value (CEL). */
const shardValue = `string(${shardCel("object.metadata.name")})`;

/**
 * Stamps the label on create and on every update (a value changed by hand is put back). A create
 * with generateName has no name at admission and stays unlabelled: replicas watch unlabelled
 * requests too. Failing open: the label only saves replicas work.
 */
function stampPolicy(): Manifest[] {
  const metadata = { name: SHARD_POLICY_NAME, labels: { ...PART_OF } };
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1beta1",
      kind: "MutatingAdmissionPolicy",
      metadata,
      spec: {
        failurePolicy: "Ignore",
        reinvocationPolicy: "Never",
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [RESOLUTION_GROUP],
              apiVersions: ["*"],
              operations: ["CREATE", "UPDATE"],
              resources: [RESOLUTION_REQUEST_PLURAL],
            },
          ],
        },
        matchConditions: [
          { name: "named", expression: "has(object.metadata.name) && object.metadata.name != ''" },
        ],
        mutations: [
          {
            patchType: "ApplyConfiguration",
            applyConfiguration: {
              expression: `Object{metadata: Object.metadata{labels: {'${LABEL_SHARD}': ${shardValue}}}}`,
            },
          },
        ],
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1beta1",
      kind: "MutatingAdmissionPolicyBinding",
      metadata,
      spec: { policyName: SHARD_POLICY_NAME, matchResources: { namespaceSelector: OPT_OUT } },
    },
  ];
}

/** Refuses a shard label that is not the shard of the request's name. */
function checkPolicy(): Manifest[] {
  const label = `object.metadata.labels['${LABEL_SHARD}']`;
  return admissionPolicy({
    name: `${SHARD_POLICY_NAME}-label`,
    operations: ["CREATE", "UPDATE"],
    resources: [RESOLUTION_REQUEST_PLURAL],
    validations: [
      {
        expression: `!has(object.metadata.labels) || !('${LABEL_SHARD}' in object.metadata.labels) || (has(object.metadata.name) && ${label} == ${shardValue})`,
        message: `the label ${LABEL_SHARD} is Quarry's: absent, or the shard of the request's name (Quarry's MutatingAdmissionPolicy ${SHARD_POLICY_NAME} sets it)`,
        reason: "Invalid",
      },
    ],
    namespaceSelector: OPT_OUT,
  });
}

/** The stamp and its check: install both or neither (libs/api/crds/shard/). */
export function shardPolicies(): Manifest[] {
  return [...stampPolicy(), ...checkPolicy()];
}
