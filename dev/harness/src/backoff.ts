// Tekton's backoff keys as the backoff e2e files set them, and the check that
// attempts came on that schedule.
import assert from "node:assert/strict";

/** backoff-duration 1s, factor 2, no jitter: attempts at 0 s, 1 s, 3 s, 7 s. */
export const BACKOFF_SCHEDULE = {
  "backoff-duration": "1s",
  "backoff-factor": "2",
  "backoff-jitter": "0",
  "backoff-cap": "10s",
} as const;

/** Attempt times (ms) spaced 1 s, 2 s, 4 s: never sooner, later only by an attempt's own work and the queue. */
export function assertScheduleGaps(at: readonly number[]): void {
  const gaps = at.slice(1).map((t, i) => t - at[i]!);
  for (const [i, want] of [1000, 2000, 4000].entries()) {
    const gap = gaps[i]!;
    assert.ok(
      gap >= want - 50 && gap < want + 1000,
      `gap ${i + 1}: ${gap} ms, schedule ${want} ms (${gaps})`,
    );
  }
}
