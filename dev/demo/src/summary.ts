// The table the demo ends with: each step, what was asked, how it ended and
// why, and how long it took, so a person who scrolled past the narration sees
// the whole run at a glance (and, after a failure, which step it was).
import { ANNOTATION_REASON, type AnyRun, getCondition, type ResolutionRequest } from "@quarry/api";
import { formatTable } from "@quarry/cli/table";

export interface SummaryRow {
  /** "setup", "(1)" … "(16)", "teardown". */
  step: string;
  /** What the step asked for, in a few words. */
  asked: string;
  /** e.g. "done", "Succeeded", "Failed", "denied", "failed". */
  outcome: string;
  /** The condition's reason (with Quarry's finer one), or what went wrong; "" when there is nothing to say. */
  reason: string;
  durationMs: number;
}

export const SUMMARY_HEADERS = ["STEP", "ASKED", "OUTCOME", "REASON", "DURATION"] as const;

/** A reason longer than this is cut: the table is for a glance, the narration above has the rest. */
export const MAX_REASON = 72;

/** "0.31s" below ten seconds (sub-second resolutions are the point), "12.3s" above. */
export function durationText(ms: number): string {
  const s = ms / 1000;
  return `${s.toFixed(s < 10 ? 2 : 1)}s`;
}

/** One line, at most MAX_REASON characters. */
export function shortReason(text: string): string {
  const line = text.split("\n")[0]!.trim();
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON - 1)}…` : line;
}

/** Outcome and reason of a finished ResolutionRequest: Succeeded, or Failed with e.g. "ResolutionFailed (NotFound)". */
export function requestOutcome(rr: ResolutionRequest): { outcome: string; reason: string } {
  const c = getCondition(rr.status, "Succeeded");
  if (!c || c.status === "Unknown") return { outcome: "pending", reason: c?.reason ?? "" };
  const finer = rr.status?.annotations?.[ANNOTATION_REASON];
  const reason = [c.reason, finer ? `(${finer})` : ""].filter(Boolean).join(" ");
  return { outcome: c.status === "True" ? "Succeeded" : "Failed", reason };
}

/** Outcome and reason of a finished run: Succeeded or Failed, with its condition's reason. */
export function runOutcome(run: AnyRun): { outcome: string; reason: string } {
  const c = getCondition(run, "Succeeded");
  if (!c || c.status === "Unknown") return { outcome: "pending", reason: c?.reason ?? "" };
  return { outcome: c.status === "True" ? "Succeeded" : "Failed", reason: c.reason ?? "" };
}

/** The rows as a table under a heading, each line ending in "\n". */
export function formatSummary(rows: readonly SummaryRow[]): string {
  const cells = rows.map((r) => [
    r.step,
    r.asked,
    r.outcome,
    shortReason(r.reason) || "-",
    durationText(r.durationMs),
  ]);
  return `Summary:\n${formatTable(SUMMARY_HEADERS, cells)}`;
}
