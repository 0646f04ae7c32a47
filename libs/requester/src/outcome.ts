// What a request's status means to the caller who asked for it.
//
// The Succeeded condition is the one source of truth, exactly as for Tekton's
// own requester (CRDRequester.Submit): Unknown or absent → pending, True →
// resolved, False → failed. In particular data present while the condition is
// still Unknown is *pending*. Taking the data early would almost always give
// the same answer (the lifecycle controller checks for data before it
// considers a timeout, and flips the condition within one watch event), but
// the condition is the contract every Tekton client reads; keeping to it
// means Quarry and Tekton Pipelines never disagree about one shared request,
// and a writer that sets data first and fails the request in a second patch
// is not mistaken for a success.
import {
  ANNOTATION_REASON,
  CONDITION_SUCCEEDED,
  getCondition,
  REASON_RESOLUTION_FAILED,
  type RefSource,
  type ResolutionRequest,
} from "@quarry/api";

export interface PendingOutcome {
  state: "pending";
  /** The Unknown condition's reason and message, if any (e.g. ResolutionInProgress / "waiting for resolver"). */
  reason?: string;
  message?: string;
}

export interface ResolvedOutcome {
  state: "resolved";
  /** The resolved bytes (status.data decoded); empty if the condition is True without data, as in Tekton. */
  data: Uint8Array;
  /** status.annotations: resolver metadata such as `resolution.tekton.dev/content-type`. */
  annotations: Record<string, string>;
  /** status.refSource, else the deprecated status.source that older resolvers write. */
  refSource?: RefSource;
}

export interface FailedOutcome {
  state: "failed";
  /** Tekton's condition reason: ResolutionFailed or ResolutionTimedOut (ResolutionFailed if the writer left it empty). */
  reason: string;
  /** Quarry's finer reason from status.annotations["quarry.dev/reason"] (NotFound, InvalidParams, …), if set. */
  quarryReason?: string;
  message: string;
}

export type TerminalOutcome = ResolvedOutcome | FailedOutcome;
export type Outcome = PendingOutcome | TerminalOutcome;

export function isTerminal(outcome: Outcome): outcome is TerminalOutcome {
  return outcome.state !== "pending";
}

// Standard alphabet with padding: what Go's base64.StdEncoding accepts (it skips CR and LF too).
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64, or undefined. Buffer.from alone would silently drop bad characters. */
export function decodeStdBase64(text: string): Uint8Array | undefined {
  const clean = text.replace(/[\r\n]/g, "");
  if (!STD_BASE64.test(clean)) return undefined;
  // Copy out of Buffer's shared pool so callers never see (or keep alive) unrelated bytes.
  return new Uint8Array(Buffer.from(clean, "base64"));
}

/** The caller's view of a request's status (pure; see the module comment for the rules). */
export function readOutcome(rr: ResolutionRequest): Outcome {
  const cond = getCondition(rr, CONDITION_SUCCEEDED);
  const status = rr.status;
  if (cond?.status === "False") {
    const failed: FailedOutcome = {
      state: "failed",
      reason: cond.reason || REASON_RESOLUTION_FAILED,
      message: cond.message ?? "",
    };
    const quarryReason = status?.annotations?.[ANNOTATION_REASON];
    if (quarryReason) failed.quarryReason = quarryReason;
    return failed;
  }
  if (cond?.status === "True") {
    const data = decodeStdBase64(status?.data ?? "");
    // Tekton's client would fail the same request when it reads the data; a terminal failure
    // here keeps waitFor from waiting forever on a request that can never become usable.
    if (!data) {
      return {
        state: "failed",
        reason: REASON_RESOLUTION_FAILED,
        message: "request succeeded but status.data is not valid standard base64",
      };
    }
    const resolved: ResolvedOutcome = { state: "resolved", data, annotations: { ...status?.annotations } };
    const refSource = status?.refSource ?? status?.source;
    if (refSource) resolved.refSource = refSource;
    return resolved;
  }
  const pending: PendingOutcome = { state: "pending" };
  if (cond?.reason) pending.reason = cond.reason;
  if (cond?.message) pending.message = cond.message;
  return pending;
}
