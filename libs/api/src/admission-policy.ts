// A ValidatingAdmissionPolicy on ResolutionRequests and its Deny binding: the
// shape every Quarry policy shares.
import { PART_OF } from "./crd-builder.ts";
import { RESOLUTION_GROUP } from "./types.ts";

/** A manifest object with the two fields every Kubernetes object has; the rest stays open. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  [field: string]: unknown;
}

export interface AdmissionPolicySpec {
  name: string;
  operations: string[];
  resources: string[];
  validations: { expression: string; message: string; reason: string }[];
  matchConditions?: { name: string; expression: string }[];
  /** CEL variables (`variables.<name>` in the validations), evaluated once per request. */
  variables?: { name: string; expression: string }[];
  namespaceSelector?: Record<string, unknown>;
}

/** A ValidatingAdmissionPolicy on ResolutionRequests and its Deny binding. */
export function admissionPolicy(p: AdmissionPolicySpec): Manifest[] {
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
        ...(p.variables ? { variables: p.variables } : {}),
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
