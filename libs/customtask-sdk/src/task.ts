// What a custom-task author writes: which runs the task serves, the params it
// declares, and one `reconcile` that looks at a run and says what state it is
// in. Everything else (informers, status writes under optimistic locking,
// start, cancel, timeout, retries, remote refs) is the SDK's.
import type {
  AnyRun,
  ChildReference,
  ParamDeclaration,
  ParamValue,
  RefSource,
  RunResult,
  RunView,
} from "@quarry/api";
import type { Logger } from "@quarry/observability";

/** A param the task declares (Tekton's ParamSpec shape); undeclared params fail the run. */
export type DeclaredParam = ParamDeclaration;

/** The run's remote definition, read through its ResolutionRequest. */
export type RefOutcome =
  | { state: "none" }
  | { state: "pending"; request: string; message?: string }
  | { state: "failed"; request: string; reason: string; quarryReason?: string; message: string }
  | { state: "resolved"; request: string; data: Uint8Array; object: unknown; refSource?: RefSource };

export interface TaskContext {
  run: AnyRun;
  view: RunView;
  /** Declared params with defaults applied, checked for presence and type. */
  params: Record<string, ParamValue>;
  /**
   * The embedded spec (`customSpec.spec` / `spec.spec`) with the run's params substituted, checked
   * against the `params` it declares; undefined for a run with a ref.
   */
  spec: Record<string, unknown> | undefined;
  now: number;
  /** When the current attempt started (ms since the epoch). */
  startedAt: number;
  /** 1 for the first attempt, 2 for the first retry… */
  attempt: number;
  /** The run's timeout in ms (0: none), for tasks whose own checks depend on it. */
  timeoutMs: number;
  /** The remote definition of a `ref`/`customRef` with a resolver; `none` for local refs. */
  resolvedRef(): Promise<RefOutcome>;
  log: Logger;
  signal: AbortSignal;
}

/** What the run is now. */
export type Step = StepState & {
  /**
   * The objects the task made for the run (TEP-0100), the whole list: written to
   * status.childReferences when it differs. Never a child's status or data.
   */
  childReferences?: ChildReference[];
};

type StepState =
  | {
      type: "running";
      message?: string;
      /** Look again after this long (e.g. a wait's remaining time); the SDK caps it at the timeout. */
      requeueAfterMs?: number;
      extraFields?: Record<string, unknown>;
    }
  | { type: "succeeded"; reason?: string; message?: string; results?: RunResult[] }
  | {
      type: "failed";
      reason: string;
      message: string;
      /** Bad input fails at once: retrying cannot fix it. Default: retry while retries remain. */
      retryable?: boolean;
    };

export interface CustomTask {
  /** Runs whose ref or embedded spec names this group (any version) and kind. */
  readonly group: string;
  readonly kind: string;
  /** Declared params; when set, the SDK checks given params against them before `reconcile`. */
  readonly params?: readonly DeclaredParam[];
  /** Whether a named ref (`ref.name`) is allowed; Wait-like tasks have no named definitions. */
  readonly allowsRefName?: boolean;
  reconcile(ctx: TaskContext): Promise<Step> | Step;
  /** Cleanup when the run is cancelled or times out (delete what the task started). */
  stop?(ctx: TaskContext, why: "cancelled" | "timedOut"): Promise<void> | void;
}
