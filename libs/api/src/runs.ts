// Custom-task runs: Tekton's v1alpha1 Run (the seed, TEP-0002) and v1beta1
// CustomRun (what Tekton Pipelines creates today). Two wire shapes, one
// internal model: code reads a run through `runView`, which hides whether the
// reference lives in `ref`/`spec` or `customRef`/`customSpec` and which
// reasons the flavour uses.
import type { Condition, ObjectMeta, Param, RefSource } from "./types.ts";

export const TEKTON_GROUP = "tekton.dev";
export const RUN_V1ALPHA1 = "tekton.dev/v1alpha1";
export const CUSTOM_RUN_V1BETA1 = "tekton.dev/v1beta1";

export const runs = {
  group: TEKTON_GROUP,
  version: "v1alpha1",
  plural: "runs",
  kind: "Run",
  namespaced: true,
} as const;

export const customRuns = {
  group: TEKTON_GROUP,
  version: "v1beta1",
  plural: "customruns",
  kind: "CustomRun",
  namespaced: true,
} as const;

/** The one value `spec.status` takes, in both flavours (Tekton's RunSpecStatusCancelled / CustomRunSpecStatusCancelled). */
export const RUN_SPEC_STATUS_CANCELLED = "RunCancelled";

/** Tekton's default run timeout when `spec.timeout` is unset (config-defaults `default-timeout-minutes`). */
export const DEFAULT_RUN_TIMEOUT_MS = 60 * 60 * 1000;

/** A reference to what a run executes: by kind (and name), or remote through a resolver. */
export interface RunRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  /** Tekton's deprecated bundle field; kept so it is not dropped. */
  bundle?: string;
  resolver?: string;
  params?: Param[];
}

/** A spec embedded in the run itself (`spec` of a Run, `customSpec` of a CustomRun). */
export interface EmbeddedRunSpec {
  apiVersion?: string;
  kind?: string;
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

interface RunSpecFields {
  params?: Param[];
  /** `RunCancelled` asks the run's controller to stop. */
  status?: string;
  statusMessage?: string;
  retries?: number;
  serviceAccountName?: string;
  /** A Go duration ("1h0m0s"); "0" or "0s" means no timeout. */
  timeout?: string;
  workspaces?: Record<string, unknown>[];
}

export interface RunSpecV1Alpha1 extends RunSpecFields {
  ref?: RunRef;
  spec?: EmbeddedRunSpec;
  podTemplate?: Record<string, unknown>;
}

export interface CustomRunSpecV1Beta1 extends RunSpecFields {
  customRef?: RunRef;
  customSpec?: EmbeddedRunSpec;
}

export interface RunResult {
  name: string;
  value: string;
}

/** TEP-0100: what a run created, by reference only (never the child's status or data). */
export interface ChildReference {
  apiVersion: string;
  kind: string;
  name: string;
  pipelineTaskName?: string;
}

/** Status fields of one attempt (also the shape of each retriesStatus entry). */
export interface RunStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  annotations?: Record<string, string>;
  /** RFC 3339 */
  startTime?: string;
  /** RFC 3339 */
  completionTime?: string;
  results?: RunResult[];
  retriesStatus?: RunStatus[];
  extraFields?: Record<string, unknown>;
  /** Quarry: what this run created (its ResolutionRequest), by reference. */
  childReferences?: ChildReference[];
  /** Quarry: where the run's definition came from, as TaskRun's status.provenance. */
  provenance?: { refSource?: RefSource };
}

export interface Run {
  apiVersion: typeof RUN_V1ALPHA1;
  kind: "Run";
  metadata: ObjectMeta;
  spec: RunSpecV1Alpha1;
  status?: RunStatus;
}

export interface CustomRun {
  apiVersion: typeof CUSTOM_RUN_V1BETA1;
  kind: "CustomRun";
  metadata: ObjectMeta;
  spec: CustomRunSpecV1Beta1;
  status?: RunStatus;
}

export type AnyRun = Run | CustomRun;
export type RunFlavour = AnyRun["kind"];

/** Condition reasons Tekton defines per flavour; the custom-task contract is read through these. */
export interface RunReasons {
  cancelled: string;
  timedOut: string;
}

export const RUN_REASONS: Readonly<Record<RunFlavour, RunReasons>> = {
  Run: { cancelled: "RunCancelled", timedOut: "RunTimedOut" },
  CustomRun: { cancelled: "CustomRunCancelled", timedOut: "CustomRunTimedOut" },
};

/** The flavour-free view of a run every Quarry component reads. */
export interface RunView {
  flavour: RunFlavour;
  resource: typeof runs | typeof customRuns;
  ref: RunRef | undefined;
  embedded: EmbeddedRunSpec | undefined;
  /** apiVersion/kind of what the run executes, from the ref or the embedded spec. */
  target: { apiVersion: string | undefined; kind: string | undefined };
  params: Param[];
  cancelRequested: boolean;
  retries: number;
  reasons: RunReasons;
}

export function isRunObject(obj: { apiVersion?: string; kind?: string }): obj is AnyRun {
  return (
    (obj.apiVersion === RUN_V1ALPHA1 && obj.kind === "Run") ||
    (obj.apiVersion === CUSTOM_RUN_V1BETA1 && obj.kind === "CustomRun")
  );
}

export function runView(run: AnyRun): RunView {
  const custom = run.kind === "CustomRun";
  const spec = run.spec ?? {};
  const ref = custom ? (spec as CustomRunSpecV1Beta1).customRef : (spec as RunSpecV1Alpha1).ref;
  const embedded = custom ? (spec as CustomRunSpecV1Beta1).customSpec : (spec as RunSpecV1Alpha1).spec;
  const source = ref ?? embedded;
  return {
    flavour: run.kind,
    resource: custom ? customRuns : runs,
    ref,
    embedded,
    target: { apiVersion: source?.apiVersion, kind: source?.kind },
    params: spec.params ?? [],
    cancelRequested: spec.status === RUN_SPEC_STATUS_CANCELLED,
    retries: typeof spec.retries === "number" && spec.retries > 0 ? Math.floor(spec.retries) : 0,
    reasons: RUN_REASONS[run.kind],
  };
}

/** Which field names the reference in this flavour, for messages ("spec.customRef"). */
export function refFieldName(flavour: RunFlavour): { ref: string; spec: string } {
  return flavour === "CustomRun"
    ? { ref: "spec.customRef", spec: "spec.customSpec" }
    : { ref: "spec.ref", spec: "spec.spec" };
}

/** How messages name what a run executes: both the kind and its apiVersion, since either may be the one nobody serves. */
export function targetName(view: Pick<RunView, "target">): string {
  return `${view.target.kind ?? "<no kind>"} (apiVersion ${view.target.apiVersion ?? "<none>"})`;
}
