// The context a Controller hands a reconcile, for tests that call a
// reconciler directly: first attempt, a signal nobody aborts, a silent logger.
import { createLogger } from "@quarry/observability";
import type { ReconcileContext } from "../queue/controller.ts";

const quiet = createLogger({ service: "test", level: "silent" });

/** A ReconcileContext with `overrides` applied (e.g. `{ attempt: 3 }`). */
export function reconcileContext(overrides: Partial<ReconcileContext> = {}): ReconcileContext {
  return { attempt: 1, signal: new AbortController().signal, log: quiet, ...overrides };
}
