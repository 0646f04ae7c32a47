// Drives one resolver: decides each request, serves it from the memo (cache or
// a shared in-flight call), enforces the per-attempt deadline, retries
// transient errors through the queue's backoff (the controller counts the
// attempts), and writes the outcome under optimistic locking. Status writes
// never touch a request that is already done or resolved. A Pending step
// writes nothing (but the one-time accepted-by stamp) and releases the
// worker; the request comes back on a child event or at its wake-up time.
import { hostname } from "node:os";
import {
  ANNOTATION_ACCEPTED_BY,
  ANNOTATION_TRACEPARENT,
  isDone,
  type QuarryReason,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import {
  causeChain,
  type EventRecorder,
  errorMessage,
  formatDuration,
  type KubeClient,
  type Lister,
  lockedMergePatch,
  objectKey,
  type ReconcileContext,
  type ReconcileOutcome,
  type Reconciler,
  TransientError,
} from "@quarry/kube";
import { contextFromTraceparent, type Logger, type Span, withSpan } from "@quarry/observability";
import { checkKind, checkSize } from "./checks.ts";
import type { ChildCaches } from "./children.ts";
import type { LoadedConfig } from "./config.ts";
import { decideResolution, failureStatus, type ResolutionDecision, successStatus } from "./decide.ts";
import { ResolutionError } from "./errors.ts";
import { type Memoized, type MemoPending, ResolutionMemo } from "./memo.ts";
import type { Outcome, ResolverMetrics } from "./metrics.ts";
import { newestCopy } from "./newest.ts";
import { ParamsValidator } from "./params.ts";
import { type JobResolver, jobTraits, type Pending, type ResolveContext, type Resolver } from "./resolver.ts";
import { backoffDelayMs } from "./wait-backoff.ts";

export interface ResolverControllerDeps {
  resolver: Resolver | JobResolver;
  client: KubeClient;
  /** The requests informer's cache (a Map-backed lister in tests). */
  requests: Lister<ResolutionRequest>;
  /** Caches of the resolver's `watches`, for ctx.children (absent: the resolver watches nothing). */
  children?: ChildCaches;
  config: () => LoadedConfig;
  recorder: EventRecorder;
  metrics: ResolverMetrics;
  log: Logger;
  /** Aborted at shutdown. */
  stopping: AbortSignal;
  /** Clock for condition and cache timestamps (tests fix it). */
  now?: () => number;
}

export class ResolverReconciler implements Reconciler {
  private readonly deps: ResolverControllerDeps;
  private readonly validator: ParamsValidator;
  private readonly memo: ResolutionMemo;
  private readonly cancels = new Map<string, AbortController>();
  private readonly identity: string;

  constructor(deps: ResolverControllerDeps) {
    this.deps = deps;
    this.validator = new ParamsValidator(deps.resolver.paramsSchema, deps.resolver.compiledParams);
    this.identity = `${deps.resolver.type}-resolver/${hostname()}`;
    this.memo = new ResolutionMemo({ now: deps.now });
  }

  /** Stops work for a request that was deleted or finished elsewhere. */
  cancel(key: string): void {
    this.cancels.get(key)?.abort(new Error("request deleted or finished elsewhere"));
  }

  async reconcile(key: string, { attempt }: ReconcileContext): Promise<ReconcileOutcome | undefined> {
    const rr = this.deps.requests.getByKey(key);
    if (!rr) return undefined;
    const config = this.deps.config();
    const decision = decideResolution(rr, this.deps.resolver, this.validator, config);
    if (decision.kind === "skip") return undefined;
    if (decision.kind === "fail") {
      await this.writeFailure(rr, decision.reason, decision.message);
      return undefined;
    }
    const parent = contextFromTraceparent(rr.metadata.annotations?.[ANNOTATION_TRACEPARENT]);
    const attrs = {
      "quarry.request": key,
      "quarry.resolver": this.deps.resolver.type,
      "quarry.attempt": attempt,
    };
    return withSpan(`${this.deps.resolver.type}.resolve`, parent, attrs, async (span) => {
      const type = this.deps.resolver.type;
      const started = performance.now();
      this.deps.metrics.inflight(type, 1);
      let outcome: Outcome = "failed";
      try {
        const step = await this.resolveAndWrite(rr, key, decision, config, span, attempt);
        outcome = step.outcome;
        return step.requeueAfterMs === undefined ? undefined : { requeueAfterMs: step.requeueAfterMs };
      } catch (err) {
        outcome = "retried";
        throw err;
      } finally {
        const seconds = (performance.now() - started) / 1000;
        span.setAttribute("quarry.outcome", outcome);
        this.deps.metrics.inflight(type, -1);
        this.deps.metrics.duration(type, outcome, seconds);
        // one line per step, the metric's twin: a replica's count survives its exit (rolling updates)
        this.deps.log.debug({ key, outcome, attempt, ms: Math.round(seconds * 1000) }, "resolution step");
      }
    });
  }

  private async resolveAndWrite(
    rr: ResolutionRequest,
    key: string,
    decision: Extract<ResolutionDecision, { kind: "resolve" }>,
    config: LoadedConfig,
    span: Span,
    attempt: number,
  ): Promise<Step> {
    const { resolver, metrics, log } = this.deps;
    const hit = this.memo.lookup(decision, config.runtime);
    metrics.cache(resolver.type, decision.useCache ? (hit ? "hit" : "miss") : "bypass");
    if (hit) {
      span.setAttribute("quarry.cache", "hit");
      return { outcome: await this.finish(this.newest(rr), hit, config) };
    }

    const cancel = new AbortController();
    this.cancels.set(key, cancel);
    const timeout = AbortSignal.timeout(decision.timeoutMs);
    const signal = AbortSignal.any([cancel.signal, timeout, this.deps.stopping]);
    // a slow first attempt, or any retry, tells the lifecycle controller (and humans) someone is on it;
    // the outcome's write waits for that stamp and starts from the object it returned
    let stamped: Promise<ResolutionRequest | undefined> = Promise.resolve(undefined);
    const stamp = setTimeout(
      () => {
        stamped = this.stampAccepted(this.newest(rr));
      },
      attempt > 1 ? 0 : config.runtime.acceptedStampAfterMs,
    );
    let memoized: Memoized | MemoPending;
    try {
      const ctx = this.context(rr, key, config, span, attempt);
      const { result, shared } = this.memo.run(decision, config.runtime, signal, (s) =>
        resolver.resolve(decision.params, { ...ctx, signal: s }),
      );
      if (shared) span.setAttribute("quarry.singleflight", "joined");
      memoized = await result;
    } catch (err) {
      if (err instanceof ResolutionError) {
        await this.writeFailure(this.newest(rr, await stamped), err.reason, err.message);
        return { outcome: "failed" };
      }
      if (cancel.signal.aborted || this.deps.stopping.aborted) return { outcome: "cancelled" };
      const why = timeout.aborted
        ? `attempt ${attempt} timed out after ${formatDuration(decision.timeoutMs)}`
        : `attempt ${attempt} failed: ${errorMessage(err)}`;
      const schedule = retrySchedule(resolver, config, attempt);
      if (attempt >= schedule.attempts) {
        await this.writeFailure(
          this.newest(rr, await stamped),
          "SourceUnavailable",
          `${resolver.type} resolver gave up after ${attempt} attempts; ${why}`,
        );
        return { outcome: "failed" };
      }
      log.warn({ key, attempt, err: why, retryInMs: schedule.delayMs }, "resolution failed, will retry");
      throw new TransientError(why, {
        cause: err,
        retryAfterMs: retryAfterOf(err),
        backoffMs: schedule.delayMs,
      });
    } finally {
      clearTimeout(stamp);
      if (this.cancels.get(key) === cancel) this.cancels.delete(key);
    }
    const base = this.newest(rr, await stamped);
    if ("pending" in memoized) return this.wait(base, key, memoized.pending, span);
    return { outcome: await this.finish(base, memoized, config) };
  }

  /** The newest copy of `rr` this replica holds, for a write that should not meet a 409 (newest.ts). */
  private newest(rr: ResolutionRequest, ...written: (ResolutionRequest | undefined)[]): ResolutionRequest {
    return newestCopy(rr, this.deps.requests.getByKey(objectKey(rr)), ...written);
  }

  private context(
    rr: ResolutionRequest,
    key: string,
    config: LoadedConfig,
    span: Span,
    attempt: number,
  ): Omit<ResolveContext, "signal"> {
    const { client, children, log } = this.deps;
    const uid = rr.metadata.uid;
    return {
      namespace: rr.metadata.namespace ?? "",
      name: rr.metadata.name ?? "",
      url: rr.spec?.url,
      request: rr,
      attempt,
      config: config.raw,
      log: log.child({ key }),
      span,
      client,
      ownerReference: {
        apiVersion: rr.apiVersion ?? `${resolutionRequests.group}/${resolutionRequests.version}`,
        kind: rr.kind ?? resolutionRequests.kind,
        name: rr.metadata.name ?? "",
        uid: uid ?? "",
        controller: true,
      },
      children: (resource) => {
        if (!children) throw new Error(`ctx.children(${resource.plural}): the resolver declares no watches`);
        return children.owned(resource, uid, rr.metadata.namespace);
      },
    };
  }

  /**
   * A pending step: nothing is written but the one-time accepted-by stamp (so a global timeout
   * says a resolver was on it), the queue forgets the key's failures, and the request comes back
   * on a child event or after `wakeAfterMs`.
   */
  private async wait(rr: ResolutionRequest, key: string, p: Pending, span: Span): Promise<Step> {
    span.setAttribute("quarry.pending", p.message ?? "");
    this.deps.log.debug({ key, message: p.message, wakeAfterMs: p.wakeAfterMs }, "resolution pending");
    if (!rr.status?.annotations?.[ANNOTATION_ACCEPTED_BY]) await this.stampAccepted(rr);
    const wake = p.wakeAfterMs;
    const timed = wake !== undefined && Number.isFinite(wake) && wake > 0;
    return { outcome: "pending", requeueAfterMs: timed ? wake : undefined };
  }

  /** Checks the result and writes it (or the failure the checks found). */
  private async finish(
    rr: ResolutionRequest,
    { resolved, cached }: Memoized,
    config: LoadedConfig,
  ): Promise<"succeeded" | "failed"> {
    const what = `resolved ${this.deps.resolver.type} resource`;
    const size = checkSize(resolved.data, what);
    if (!size.ok) {
      await this.writeFailure(rr, size.reason, size.message);
      return "failed";
    }
    if (jobTraits(this.deps.resolver).checksKind) {
      const kind = checkKind(resolved.data, config.runtime.allowedKinds, what);
      if (!kind.ok) {
        await this.writeFailure(rr, kind.reason, kind.message);
        return "failed";
      }
    }
    const cache = cached && { type: this.deps.resolver.type, ...cached };
    await this.writeOutcome(rr, successStatus(resolved, cache));
    return "succeeded";
  }

  /** Writes a final status unless the request is done or has data already; the object written, if any. */
  private writeOutcome(
    rr: ResolutionRequest,
    status: Record<string, unknown>,
  ): Promise<ResolutionRequest | undefined> {
    return lockedMergePatch(
      this.deps.client,
      resolutionRequests,
      rr,
      (latest) =>
        isDone(latest.status) || latest.status?.data
          ? undefined
          : { status: { ...status, ...observed(latest) } },
      { subresource: "status" },
    );
  }

  private async writeFailure(rr: ResolutionRequest, reason: QuarryReason, message: string): Promise<void> {
    const written = await this.writeOutcome(
      rr,
      failureStatus(reason, message, new Date((this.deps.now ?? Date.now)())),
    );
    if (written) {
      this.deps.metrics.failure(this.deps.resolver.type, reason);
      this.deps.log.info({ key: objectKey(rr), reason, message }, "resolution failed");
      this.deps.recorder.record(written, "Warning", reason, message);
    }
  }

  /** Tells the lifecycle controller (and humans) that a resolver is working on it; the object written, if any. */
  private async stampAccepted(rr: ResolutionRequest): Promise<ResolutionRequest | undefined> {
    try {
      return await lockedMergePatch(
        this.deps.client,
        resolutionRequests,
        rr,
        (latest) =>
          isDone(latest.status) || latest.status?.data || latest.status?.annotations?.[ANNOTATION_ACCEPTED_BY]
            ? undefined
            : { status: { annotations: { [ANNOTATION_ACCEPTED_BY]: this.identity } } },
        { subresource: "status" },
      );
    } catch (err) {
      this.deps.log.debug({ key: objectKey(rr), err: errorMessage(err) }, "could not stamp accepted-by");
      return undefined;
    }
  }
}

/**
 * The generation a status write was computed from, as Tekton's lifecycle reconciler records it.
 * Knative's reconcilers (Tekton's included) reset a status whose observedGeneration lags the
 * object's generation to Unknown before reconciling: without it, a request this resolver
 * finished before any lifecycle controller had initialised it was turned back to in-progress by
 * Tekton's controller and then timed out, losing the resolver's failure message.
 */
function observed(rr: ResolutionRequest): { observedGeneration?: number } {
  return rr.metadata.generation === undefined ? {} : { observedGeneration: rr.metadata.generation };
}

/** What one reconcile of a resolvable request came to. */
interface Step {
  outcome: Exclude<Outcome, "retried">;
  requeueAfterMs?: number;
}

/** Longest delay a timer takes (setTimeout's limit): a longer backoff waits this long. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How many attempts a request gets and how long to wait after the `failed`-th: the resolver's own
 * backoff (Tekton's backoff-* keys) when its config sets one, else the runtime's max-attempts with
 * the queue's exponential delays (delayMs undefined).
 */
export function retrySchedule(
  resolver: Pick<Resolver, "retryBackoff">,
  config: LoadedConfig,
  failed: number,
  random: () => number = Math.random,
): { attempts: number; delayMs: number | undefined } {
  const backoff = resolver.retryBackoff?.(config.raw);
  if (!backoff) return { attempts: config.runtime.maxAttempts, delayMs: undefined };
  return {
    attempts: backoff.steps,
    delayMs: Math.min(backoffDelayMs(backoff, failed, random), MAX_TIMER_MS),
  };
}

/**
 * A resolver's error may carry the source's Retry-After (e.g. a registry's 429), possibly on an
 * error it wrapped; the queue waits at least that long. Duck-typed: resolvers' own error classes
 * (RegistryError) are not TransientErrors.
 */
function retryAfterOf(err: unknown): number | undefined {
  for (const e of causeChain(err)) {
    const ms = (e as { retryAfterMs?: unknown }).retryAfterMs;
    if (typeof ms === "number" && Number.isFinite(ms) && ms > 0) return ms;
  }
  return undefined;
}
