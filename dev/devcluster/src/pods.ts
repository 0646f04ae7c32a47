// Pods and Nodes as the dev cluster's clients read them: the resource types
// and the parts of a Pod's spec and status they look at.
import type { KubeObject, ResourceType } from "@quarry/kube";

export const pods: ResourceType = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };
export const nodes: ResourceType = {
  group: "",
  version: "v1",
  plural: "nodes",
  kind: "Node",
  namespaced: false,
};

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  imagePullPolicy?: string;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  [key: string]: unknown;
}

export interface Pod extends KubeObject {
  spec: {
    nodeName?: string;
    hostNetwork?: boolean;
    initContainers?: Container[];
    containers: Container[];
    [key: string]: unknown;
  };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    initContainerStatuses?: ContainerStatus[];
    containerStatuses?: ContainerStatus[];
  };
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  state?: {
    running?: { startedAt?: string };
    terminated?: { exitCode: number; reason?: string; message?: string };
    waiting?: { reason?: string; message?: string };
  };
}
