// The Tekton kinds the cluster resolver serves, and where the API serves them.
import type { ResourceType } from "@quarry/kube";

export type ClusterKind = "task" | "pipeline" | "stepaction";
export const CLUSTER_KINDS: readonly ClusterKind[] = ["task", "pipeline", "stepaction"];

/** Preferred versions first: the first one the cluster serves is used. */
export const KIND_RESOURCES: Record<ClusterKind, readonly ResourceType[]> = {
  task: [{ group: "tekton.dev", version: "v1", plural: "tasks", kind: "Task", namespaced: true }],
  pipeline: [{ group: "tekton.dev", version: "v1", plural: "pipelines", kind: "Pipeline", namespaced: true }],
  stepaction: [
    { group: "tekton.dev", version: "v1", plural: "stepactions", kind: "StepAction", namespaced: true },
    { group: "tekton.dev", version: "v1beta1", plural: "stepactions", kind: "StepAction", namespaced: true },
  ],
};
