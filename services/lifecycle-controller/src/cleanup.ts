// Completed requests do not pile up: every resolved or failed request would
// otherwise stay in etcd and in every lifecycle and resolver informer for
// good (Tekton users ask for the same: tektoncd/pipeline#10692). A completed
// request is deleted `completed-request-ttl` after it completed, unless an
// owner may still want it: a Tekton run that has not finished may not have
// read it yet (tektoncd/pipeline#10414: a PipelineRun can sit in
// ResolvingTaskRef and read a completed request much later), so a request
// owned by a run waits for the run to finish or go; an owner of a kind Quarry
// does not know keeps its requests until the garbage collector takes them
// with it. Pure decisions; the controller does the lookups and the delete.
import {
  CONDITION_SUCCEEDED,
  getCondition,
  isDone,
  type OwnerReference,
  type ResolutionRequest,
} from "@quarry/api";

/** What the owner a completed request names is doing, as the controller found it. */
export type OwnerState = "gone" | "done" | "running" | "unreadable";

export type CleanupDecision =
  | { kind: "keep" }
  | { kind: "wait"; afterMs: number }
  | { kind: "check-owner"; owner: OwnerReference }
  | { kind: "delete"; why: string };

export interface CleanupWorld {
  now: number;
  /** 0 = never delete. */
  ttlMs: number;
}

/** How often a request whose owner is still running is looked at again. */
export const OWNER_RECHECK_MS = 5 * 60_000;

/** The owners whose progress Quarry can read: Tekton's runs, whose Succeeded condition says when they are done. */
const RUN_KINDS: ReadonlySet<string> = new Set(["TaskRun", "PipelineRun", "CustomRun", "Run"]);

export function isKnownRunOwner(owner: OwnerReference): boolean {
  return owner.apiVersion.startsWith("tekton.dev/") && RUN_KINDS.has(owner.kind);
}

/** When the request completed: its Succeeded condition's transition, else its creation. */
export function completedAt(rr: ResolutionRequest): number {
  const c = getCondition(rr.status, CONDITION_SUCCEEDED);
  const t = Date.parse(c?.lastTransitionTime ?? rr.metadata.creationTimestamp ?? "");
  return Number.isNaN(t) ? 0 : t;
}

/**
 * Whether a request can go now. `owner` is undefined until the controller
 * looked the owner up (asked for by a check-owner decision).
 */
export function decideCleanup(
  rr: ResolutionRequest,
  world: CleanupWorld,
  owner?: OwnerState,
): CleanupDecision {
  if (world.ttlMs <= 0 || !isDone(rr.status) || rr.metadata.deletionTimestamp) return { kind: "keep" };
  const expiresAt = completedAt(rr) + world.ttlMs;
  if (world.now < expiresAt) return { kind: "wait", afterMs: expiresAt - world.now };
  const refs = rr.metadata.ownerReferences ?? [];
  const ref = refs.find((o) => o.controller) ?? refs[0];
  if (!ref) return { kind: "delete", why: "completed, no owner" };
  if (!isKnownRunOwner(ref)) return { kind: "keep" };
  switch (owner) {
    case undefined:
      return { kind: "check-owner", owner: ref };
    case "gone":
      return { kind: "delete", why: `completed, owner ${ref.kind} ${ref.name} is gone` };
    case "done":
      return { kind: "delete", why: `completed, owner ${ref.kind} ${ref.name} is done` };
    case "running":
      return { kind: "wait", afterMs: Math.min(world.ttlMs, OWNER_RECHECK_MS) };
    case "unreadable":
      return { kind: "wait", afterMs: OWNER_RECHECK_MS };
  }
}
