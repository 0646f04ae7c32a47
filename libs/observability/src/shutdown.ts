import type { Logger } from "./logger.ts";

export interface ShutdownOptions {
  /** Longest the drain may take before the process is forced out with code 1. */
  timeoutMs: number;
  /** Injected in tests; defaults to process.exit. */
  exit?: (code: number) => void;
}

const SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/**
 * On the first SIGTERM/SIGINT runs fn once (graceful drain) and exits 0, or 1 if it throws or
 * outlives timeoutMs; a second signal exits 1 at once (an impatient operator or kubelet).
 * Returns a function that removes the handlers.
 */
export function onShutdown(
  log: Logger,
  fn: (signal: NodeJS.Signals) => Promise<void>,
  options: ShutdownOptions,
): () => void {
  const processExit = options.exit ?? ((code: number) => process.exit(code));
  let draining = false;
  let exited = false;
  // Only the first outcome counts (e.g. a drain that finishes after the forced exit).
  const exit = (code: number): void => {
    if (exited) return;
    exited = true;
    processExit(code);
  };

  const handler = (signal: NodeJS.Signals): void => {
    if (draining) {
      log.warn({ signal }, "second signal, exiting now");
      exit(1);
      return;
    }
    draining = true;
    log.info({ signal, timeoutMs: options.timeoutMs }, "shutting down");
    const timer = setTimeout(() => {
      log.error({ timeoutMs: options.timeoutMs }, "shutdown timed out, exiting");
      exit(1);
    }, options.timeoutMs);
    fn(signal).then(
      () => {
        clearTimeout(timer);
        log.info("shutdown complete");
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(timer);
        log.error({ err }, "shutdown failed");
        exit(1);
      },
    );
  };

  for (const signal of SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of SIGNALS) process.off(signal, handler);
  };
}
