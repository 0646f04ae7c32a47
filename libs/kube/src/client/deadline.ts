// A call's deadline and its caller's signal as one AbortSignal, released when the call ends.
// AbortSignal.timeout plus AbortSignal.any did the same, but per API call they left a 30 s timer
// and weak references behind until the timer fired: at a few hundred calls a second (status
// writes, Lease rounds) that was a steady share of a replica's CPU in timers and GC.

export interface Deadline {
  /** Aborted when the deadline passes (a "TimeoutError" DOMException, as AbortSignal.timeout's) or the caller's signal aborts (its reason). */
  signal: AbortSignal;
  /** The call is over: the timer and the listener on the caller's signal go. */
  release(): void;
}

export function deadline(timeoutMs: number, outer?: AbortSignal): Deadline {
  const controller = new AbortController();
  if (outer?.aborted) {
    controller.abort(outer.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const onOuterAbort = () => {
    clearTimeout(timer);
    controller.abort(outer?.reason);
  };
  const timer = setTimeout(() => {
    outer?.removeEventListener("abort", onOuterAbort);
    controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }, timeoutMs);
  // like AbortSignal.timeout: a pending deadline does not keep the process alive
  timer.unref();
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuterAbort);
    },
  };
}
