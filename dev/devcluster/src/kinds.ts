// Resource types the harness applies (test infrastructure only).
import type { ResourceType } from "@quarry/kube";

const rt = (
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
): ResourceType => ({
  group,
  version,
  plural,
  kind,
  namespaced,
});

export const kinds: Record<string, ResourceType> = {
  Namespace: rt("", "v1", "namespaces", "Namespace", false),
  ServiceAccount: rt("", "v1", "serviceaccounts", "ServiceAccount", true),
  ConfigMap: rt("", "v1", "configmaps", "ConfigMap", true),
  Secret: rt("", "v1", "secrets", "Secret", true),
  Event: rt("", "v1", "events", "Event", true),
  CustomResourceDefinition: rt(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    false,
  ),
  ClusterRole: rt("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false),
  ClusterRoleBinding: rt(
    "rbac.authorization.k8s.io",
    "v1",
    "clusterrolebindings",
    "ClusterRoleBinding",
    false,
  ),
  Role: rt("rbac.authorization.k8s.io", "v1", "roles", "Role", true),
  RoleBinding: rt("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true),
  Service: rt("", "v1", "services", "Service", true),
  Pod: rt("", "v1", "pods", "Pod", true),
  Deployment: rt("apps", "v1", "deployments", "Deployment", true),
  ReplicaSet: rt("apps", "v1", "replicasets", "ReplicaSet", true),
  Lease: rt("coordination.k8s.io", "v1", "leases", "Lease", true),
  Task: rt("tekton.dev", "v1", "tasks", "Task", true),
  Pipeline: rt("tekton.dev", "v1", "pipelines", "Pipeline", true),
  StepAction: rt("tekton.dev", "v1beta1", "stepactions", "StepAction", true),
  ValidatingAdmissionPolicy: rt(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy",
    false,
  ),
  MutatingAdmissionPolicy: rt(
    "admissionregistration.k8s.io",
    "v1beta1",
    "mutatingadmissionpolicies",
    "MutatingAdmissionPolicy",
    false,
  ),
  MutatingAdmissionPolicyBinding: rt(
    "admissionregistration.k8s.io",
    "v1beta1",
    "mutatingadmissionpolicybindings",
    "MutatingAdmissionPolicyBinding",
    false,
  ),
  ValidatingAdmissionPolicyBinding: rt(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    false,
  ),
};

export function kindOf(kind: string | undefined): ResourceType {
  const found = kind ? kinds[kind] : undefined;
  if (!found) throw new Error(`harness does not know kind ${kind}`);
  return found;
}
