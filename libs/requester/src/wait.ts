// Waiting for one request to finish, for callers that block on a result (the
// CLI, examples, tests). Controllers should not block a worker on this: they
// watch their requests through an informer and call readOutcome instead.
//
// One watch on exactly this object (fieldSelector metadata.name), never
// polling: a consistent LIST gives the current state and a resourceVersion to
// watch from; a watch that ends normally resumes from the last resourceVersion
// it saw; 410 Gone re-lists at once; network errors, 5xx and a stalled
// stream re-list after a capped backoff; other 4xx (RBAC, no CRD) reject.
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import { isApiError, type KubeClient, RetryDelay, WatchExpiredError, watchEventError } from "@quarry/kube";
import { activeContext, withSpan } from "@quarry/observability";
import { RequestNotFoundError, WaitAbortedError, WaitTimeoutError } from "./errors.ts";
import { type Outcome, readOutcome, type TerminalOutcome } from "./outcome.ts";

/** The two calls waitFor makes (a KubeClient; narrowed so tests can script the apiserver). */
export type WatchingClient = Pick<KubeClient, "list" | "watch">;

export interface WaitOptions {
  /** Stops waiting; the promise rejects with a WaitAbortedError (name "AbortError"). */
  signal?: AbortSignal;
  /** Gives up after this long; the promise rejects with a WaitTimeoutError (name "TimeoutError"). */
  timeoutMs?: number;
}

/** Server-side watch timeout, randomised so many waiters do not reconnect in step. */
const WATCH_SECONDS_MIN = 60;
/** A watch stream still open this long after its server-side timeout is stalled (a dead connection). */
const STALL_GRACE_MS = 30_000;

interface WatchState {
  resourceVersion: string;
  lastSeen: string;
}

function describe(outcome: Outcome): string {
  if (outcome.state !== "pending") return outcome.state;
  if (!outcome.reason) return "pending, no condition yet";
  return `pending, ${outcome.reason}${outcome.message ? `: ${outcome.message}` : ""}`;
}

/**
 * Resolves with the request's terminal outcome (resolved or failed; see readOutcome). Rejects
 * with RequestNotFoundError if the request does not exist or is deleted while waiting, and with
 * WaitAbortedError / WaitTimeoutError on abort / timeout.
 */
export function waitFor(
  client: WatchingClient,
  namespace: string,
  name: string,
  opts: WaitOptions = {},
): Promise<TerminalOutcome> {
  const attributes = { "quarry.request": `${namespace}/${name}` };
  return withSpan("resolution.wait", activeContext(), attributes, async (span) => {
    const outcome = await waitForOutcome(client, namespace, name, opts);
    span.setAttribute("quarry.outcome", outcome.state);
    if (outcome.state === "failed")
      span.setAttribute("quarry.reason", outcome.quarryReason ?? outcome.reason);
    return outcome;
  });
}

async function waitForOutcome(
  client: WatchingClient,
  namespace: string,
  name: string,
  opts: WaitOptions,
): Promise<TerminalOutcome> {
  const state: WatchState = { resourceVersion: "", lastSeen: "not read yet" };
  const stop = new AbortController();
  const timer =
    opts.timeoutMs === undefined ? undefined : setTimeout(() => stop.abort(), Math.max(0, opts.timeoutMs));
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const stopped = () =>
    opts.signal?.aborted
      ? new WaitAbortedError(namespace, name, opts.signal.reason)
      : new WaitTimeoutError(namespace, name, opts.timeoutMs ?? 0, state.lastSeen);
  const retry = new RetryDelay({ baseMs: 200, maxMs: 10_000 });
  let needList = true;
  let seen = false;
  try {
    for (;;) {
      if (signal.aborted) throw stopped();
      try {
        if (needList) {
          const list = await client.list<ResolutionRequest>(
            resolutionRequests,
            namespace,
            { fieldSelector: `metadata.name=${name}` },
            signal,
          );
          const rr = list.items[0];
          if (!rr) throw new RequestNotFoundError(namespace, name, seen);
          seen = true;
          const outcome = readOutcome(rr);
          if (outcome.state !== "pending") return outcome;
          state.lastSeen = describe(outcome);
          state.resourceVersion = list.metadata.resourceVersion ?? rr.metadata.resourceVersion ?? "";
          needList = false;
        }
        const outcome = await watchOnce(client, namespace, name, state, signal);
        if (outcome) return outcome;
        retry.reset(); // the stream ended normally: resume from state.resourceVersion
      } catch (err) {
        if (signal.aborted) throw stopped();
        if (err instanceof RequestNotFoundError || isPermanent(err)) throw err;
        needList = true;
        if (!(err instanceof WatchExpiredError)) await sleep(retry.next(), signal);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/** One watch request; the terminal outcome, or undefined when the server closed the stream. */
async function watchOnce(
  client: WatchingClient,
  namespace: string,
  name: string,
  state: WatchState,
  signal: AbortSignal,
): Promise<TerminalOutcome | undefined> {
  const timeoutSeconds = Math.floor(WATCH_SECONDS_MIN * (1 + Math.random()));
  const watch = new AbortController();
  const stall = setTimeout(() => watch.abort(), timeoutSeconds * 1000 + STALL_GRACE_MS);
  try {
    const events = client.watch<ResolutionRequest>(
      resolutionRequests,
      namespace,
      {
        fieldSelector: `metadata.name=${name}`,
        resourceVersion: state.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
      },
      AbortSignal.any([signal, watch.signal]),
    );
    for await (const event of events) {
      if (event.type === "ERROR") throw watchEventError(event.object);
      const rv = event.object.metadata?.resourceVersion;
      if (rv) state.resourceVersion = rv;
      if (event.type === "BOOKMARK") continue;
      if (event.type === "DELETED") throw new RequestNotFoundError(namespace, name, true);
      const outcome = readOutcome(event.object);
      if (outcome.state !== "pending") return outcome;
      state.lastSeen = describe(outcome);
    }
    return undefined;
  } catch (err) {
    // The apiserver may also refuse a too-old resourceVersion outright with HTTP 410.
    if (isApiError(err, 410)) throw new WatchExpiredError(err.message);
    throw err;
  } finally {
    clearTimeout(stall);
    watch.abort(); // closes the stream when we return early with an outcome
  }
}

/**
 * Client errors that retrying cannot fix (403 no RBAC, 404 no CRD, 400/422 a bad request) are
 * the caller's to see, not to hide behind endless backoff. 408, 409, 410 and 429 can pass.
 */
function isPermanent(err: unknown): boolean {
  return (
    isApiError(err) && err.status >= 400 && err.status < 500 && ![408, 409, 410, 429].includes(err.status)
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
