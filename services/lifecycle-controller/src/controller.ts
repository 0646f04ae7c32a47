// Turns lifecycle decisions into writes: the canonical label (metadata patch)
// and conditions (status patch), both under optimistic locking. On a conflict
// the decision is recomputed from the latest object, so a resolver's write
// that raced ours is never overwritten.
import {
  ANNOTATION_TRACEPARENT,
  LABEL_RESOLVER_TYPE,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import {
  type EventRecorder,
  type KubeClient,
  type Lister,
  lockedMergePatch,
  patchStatus,
  type ReconcileOutcome,
  type Reconciler,
} from "@quarry/kube";
import { contextFromTraceparent, type Logger, type Span, withSpan } from "@quarry/observability";
import type { LifecycleConfig } from "./config.ts";
import { decide } from "./reconcile.ts";

export interface LifecycleDeps {
  client: KubeClient;
  /** The requests informer's cache (a Map-backed lister in tests). */
  requests: Lister<ResolutionRequest>;
  config: () => LifecycleConfig;
  recorder: EventRecorder;
  log: Logger;
  now?: () => number;
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
    }
    return outcome.requeueAfterMs !== undefined ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
  }
}

function keyOf(rr: ResolutionRequest): string {
  return `${rr.metadata.namespace}/${rr.metadata.name}`;
}
