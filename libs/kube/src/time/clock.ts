/**
 * Time source for the controller runtime. Everything that waits (delayed adds, backoff,
 * watch restarts) goes through a Clock so tests can drive time with FakeClock
 * (testing/fake-clock.ts) instead of sleeping.
 */
export interface Clock {
  /** Milliseconds; only differences between two readings are meaningful. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds. Returns a function that cancels the timer (idempotent). */
  setTimer(ms: number, fn: () => void): () => void;
}

// setTimeout silently fires after 1 ms for delays above this (and warns), so longer
// delays are split into chunks.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Real time. now() is monotonic (performance.now() offset to the epoch) so deadlines are not
 * disturbed by wall-clock jumps (NTP steps), while still reading roughly like Date.now().
 *
 * Timers are normal (ref'd) timers: a pending delayed add keeps the process alive on purpose,
 * and the owner of the timer (e.g. WorkQueue.shutDown) is responsible for cancelling it.
 */
export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimer(ms: number, fn: () => void): () => void {
    const deadline = realClock.now() + Math.max(0, ms);
    let handle: NodeJS.Timeout | undefined;
    const arm = (): void => {
      const remaining = deadline - realClock.now();
      if (remaining > MAX_TIMEOUT_MS) {
        handle = setTimeout(arm, MAX_TIMEOUT_MS);
      } else {
        handle = setTimeout(
          () => {
            handle = undefined;
            fn();
          },
          Math.max(0, remaining),
        );
      }
    };
    arm();
    return () => {
      if (handle !== undefined) {
        clearTimeout(handle);
        handle = undefined;
      }
    };
  },
};
