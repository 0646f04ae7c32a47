// Turns lifecycle decisions into writes: the canonical label (metadata patch)
// and conditions (status patch), both under optimistic locking. On a conflict
// the decision is recomputed from the latest object, so a resolver's write
// that raced ours is never overwritten.
import {
  ANNOTATION_REASON,
  ANNOTATION_TRACEPARENT,
  type HasConditions,
  isDone,
  LABEL_RESOLVER_TYPE,
  type OwnerReference,
  REASON_RESOLUTION_TIMED_OUT,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import {
  type EventRecorder,
  isApiError,
  type KubeClient,
  type KubeObject,
  type Lister,
  lockedMergePatch,
  patchStatus,
  type ReconcileOutcome,
  type Reconciler,
} from "@quarry/kube";
import { contextFromTraceparent, type Logger, type Span, withSpan } from "@quarry/observability";
import { type CleanupDecision, decideCleanup, type OwnerState } from "./cleanup.ts";
import type { LifecycleConfig } from "./config.ts";
import { decide } from "./decide.ts";

export interface LifecycleDeps {
  client: KubeClient;
  /** The requests informer's cache (a Map-backed lister in tests). */
  requests: Lister<ResolutionRequest>;
  config: () => LifecycleConfig;
  recorder: EventRecorder;
  log: Logger;
  now?: () => number;
  /** Counts a request this controller timed out (metrics.ts), by type and Quarry's reason. */
  timedOut?: (type: string, reason: string) => void;
}

export class LifecycleReconciler implements Reconciler {
  private readonly deps: LifecycleDeps;

  constructor(deps: LifecycleDeps) {
    this.deps = deps;
  }

  async reconcile(key: string): Promise<ReconcileOutcome | undefined> {
    const cached = this.deps.requests.getByKey(key);
    if (!cached) return undefined; // deleted: nothing to do
    const parent = contextFromTraceparent(cached.metadata.annotations?.[ANNOTATION_TRACEPARENT]);
    const attributes = {
      "quarry.request": key,
      "quarry.resolver": cached.metadata.labels?.[LABEL_RESOLVER_TYPE] ?? "",
    };
    return withSpan("lifecycle.reconcile", parent, attributes, (span) => this.reconcileRequest(cached, span));
  }

  private async reconcileRequest(
    cached: ResolutionRequest,
    span: Span,
  ): Promise<ReconcileOutcome | undefined> {
    const { client, recorder, log } = this.deps;
    if (isDone(cached.status)) return this.cleanUp(cached);
    const world = () => ({ now: (this.deps.now ?? Date.now)(), config: this.deps.config() });
    let rr = cached;
    const first = decide(rr, world());

    if (first.canonicalLabel) {
      const updated = await lockedMergePatch(client, resolutionRequests, rr, (latest) => {
        const label = decide(latest, world()).canonicalLabel;
        return label ? { metadata: { labels: { [LABEL_RESOLVER_TYPE]: label } } } : undefined;
      });
      if (updated) {
        log.info({ key: keyOf(rr), type: first.canonicalLabel }, "set canonical resolver label");
        rr = updated;
      }
    }

    let applied: ReturnType<typeof decide> | undefined;
    const written = await patchStatus(client, resolutionRequests, rr, (latest) => {
      applied = decide(latest, world());
      return applied.status;
    });
    const outcome = applied ?? first;
    if (written) {
      const cond = written.status?.conditions?.find((c) => c.type === "Succeeded");
      log.info({ key: keyOf(rr), status: cond?.status, reason: cond?.reason }, "request condition updated");
      // what this pass did to the request, read in a trace without its logs
      span.setAttributes({
        "quarry.condition.status": cond?.status ?? "",
        "quarry.condition.reason": cond?.reason ?? "",
      });
      if (outcome.event)
        recorder.record(written, outcome.event.type, outcome.event.reason, outcome.event.message);
      if (outcome.event?.reason === REASON_RESOLUTION_TIMED_OUT)
        this.deps.timedOut?.(
          written.metadata.labels?.[LABEL_RESOLVER_TYPE] ?? "",
          written.status?.annotations?.[ANNOTATION_REASON] ?? "",
        );
    }
    return outcome.requeueAfterMs !== undefined ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
  }

  /** A completed request: delete it once its TTL passed and no owner wants it (cleanup.ts). */
  private async cleanUp(rr: ResolutionRequest): Promise<ReconcileOutcome | undefined> {
    const world = { now: (this.deps.now ?? Date.now)(), ttlMs: this.deps.config().completedRequestTtlMs };
    let decision: CleanupDecision = decideCleanup(rr, world);
    if (decision.kind === "check-owner") {
      decision = decideCleanup(rr, world, await this.ownerState(rr, decision.owner));
    }
    switch (decision.kind) {
      case "keep":
        return undefined;
      case "wait":
        // housekeeping: behind every request still waiting to be initialised or completed
        return { requeueAfterMs: decision.afterMs, requeueLane: "slow" };
      case "check-owner":
        return undefined; // not reached: the owner was looked up
      case "delete":
        try {
          // only the object this decision was made on: not one recreated under its name, not one changed since
          await this.deps.client.delete(
            resolutionRequests,
            rr.metadata.namespace ?? "",
            rr.metadata.name ?? "",
            {
              preconditions: { uid: rr.metadata.uid, resourceVersion: rr.metadata.resourceVersion },
            },
          );
          this.deps.log.info({ key: keyOf(rr), why: decision.why }, "deleted completed request");
        } catch (err) {
          // gone already, or changed: the informer brings the change and the decision is made again
          if (!isApiError(err, 404) && !isApiError(err, 409)) throw err;
        }
        return undefined;
    }
  }

  /** The owning run's progress: done when its Succeeded condition is True or False. */
  private async ownerState(rr: ResolutionRequest, owner: OwnerReference): Promise<OwnerState> {
    const [group, version] = owner.apiVersion.split("/");
    const rt = {
      group: group ?? "",
      version: version ?? "",
      kind: owner.kind,
      plural: `${owner.kind.toLowerCase()}s`,
      namespaced: true,
    };
    try {
      const run = await this.deps.client.get<KubeObject & { status?: HasConditions }>(
        rt,
        rr.metadata.namespace,
        owner.name,
      );
      if (owner.uid && run.metadata.uid && run.metadata.uid !== owner.uid) return "gone";
      return isDone(run.status) ? "done" : "running";
    } catch (err) {
      // 404: no such run, or its kind is not even served (no Tekton here)
      if (isApiError(err, 404)) return "gone";
      if (isApiError(err, 403)) {
        this.deps.log.warn(
          { key: keyOf(rr), owner: `${owner.kind}/${owner.name}`, err: (err as Error).message },
          "cannot read the owner of a completed request: kept (grant get on it to the lifecycle controller)",
        );
        return "unreadable";
      }
      throw err;
    }
  }
}

function keyOf(rr: ResolutionRequest): string {
  return `${rr.metadata.namespace}/${rr.metadata.name}`;
}
