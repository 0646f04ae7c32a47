// Runs and CustomRuns as Tekton Pipelines makes them: build them, create
// them, read their outcome, cancel them as a PipelineRun does.
import {
  type AnyRun,
  CUSTOM_RUN_V1BETA1,
  type CustomRun,
  customRuns,
  getCondition,
  type Param,
  RUN_V1ALPHA1,
  type Run,
  type RunFlavour,
  type RunRef,
  runs,
} from "@quarry/api";
import type { KubeClient } from "@quarry/kube";

export const WAIT_REF = { apiVersion: "wait.testing.tekton.dev/v1beta1", kind: "Wait" } as const;

export interface RunInput {
  name: string;
  ref?: RunRef;
  embedded?: { apiVersion: string; kind: string; spec?: Record<string, unknown> };
  params?: Param[];
  timeout?: string;
  retries?: number;
  status?: string;
  statusMessage?: string;
}

/** A run of either flavour, shaped as Tekton Pipelines creates it. */
export function runObject(flavour: RunFlavour, namespace: string, input: RunInput): AnyRun {
  const spec: Record<string, unknown> = { serviceAccountName: "default" };
  if (input.params) spec.params = input.params;
  if (input.timeout !== undefined) spec.timeout = input.timeout;
  if (input.retries !== undefined) spec.retries = input.retries;
  if (input.status !== undefined) spec.status = input.status;
  if (input.statusMessage !== undefined) spec.statusMessage = input.statusMessage;
  const metadata = { name: input.name, namespace };
  if (flavour === "CustomRun") {
    if (input.ref) spec.customRef = input.ref;
    if (input.embedded) spec.customSpec = input.embedded;
    return { apiVersion: CUSTOM_RUN_V1BETA1, kind: "CustomRun", metadata, spec } as CustomRun;
  }
  if (input.ref) spec.ref = input.ref;
  if (input.embedded) spec.spec = input.embedded;
  return { apiVersion: RUN_V1ALPHA1, kind: "Run", metadata, spec } as Run;
}

export const resourceOf = (flavour: RunFlavour) => (flavour === "CustomRun" ? customRuns : runs);

export function createRun(client: KubeClient, run: AnyRun): Promise<AnyRun> {
  return client.create(resourceOf(run.kind), run);
}

export function getRun(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
  name: string,
): Promise<AnyRun> {
  return client.get<AnyRun>(resourceOf(flavour), namespace, name);
}

export const runSucceeded = (run: AnyRun) => getCondition(run, "Succeeded");
export const runDone = (run: AnyRun) => {
  const s = runSucceeded(run)?.status;
  return s === "True" || s === "False";
};

/** Cancels as Tekton's PipelineRun reconciler does: spec.status and spec.statusMessage. */
export function cancelRun(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
  name: string,
  statusMessage = `${flavour} cancelled as the PipelineRun it belongs to has been cancelled.`,
): Promise<AnyRun> {
  return client.mergePatch<AnyRun>(resourceOf(flavour), namespace, name, {
    spec: { status: "RunCancelled", statusMessage },
  });
}
