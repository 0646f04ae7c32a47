// Start-up calls a service cannot run without (discovery of the kinds it
// serves): retried with capped backoff until the apiserver answers, as its
// informers are, so an apiserver that is down or refusing while the service
// starts delays it instead of crashing it with a stack trace.
import type { Logger } from "@quarry/observability";
import { errorMessage } from "./client/errors.ts";
import { type BackoffOptions, RetryDelay } from "./time/backoff.ts";

export interface UntilAnsweredOptions {
  log: Logger;
  /** Aborted at shutdown: the wait ends and the last error is thrown. */
  signal?: AbortSignal;
  /** Default: 500 ms doubling to 30 s. */
  backoff?: BackoffOptions;
}

/** `fn()`'s value once it succeeds; every failure is logged and retried. */
export async function untilAnswered<T>(
  what: string,
  fn: () => Promise<T>,
  opts: UntilAnsweredOptions,
): Promise<T> {
  const retry = new RetryDelay({ baseMs: 500, maxMs: 30_000, ...opts.backoff });
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const retryInMs = retry.next();
      opts.log.warn(
        { err: errorMessage(err), attempt: retry.attempts, retryInMs },
        `${what} failed, retrying`,
      );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, retryInMs);
        opts.signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            resolve();
          },
          { once: true },
        );
      });
      if (opts.signal?.aborted) throw err;
    }
  }
}
