// A controller: a keyed work queue, N workers, and a reconciler that is
// called with keys only and reads state from informer caches. The outcome
// taxonomy follows knative: done, requeue-after, transient error (backoff),
// permanent error (drop).
import type { Logger } from "@quarry/observability";
import type { KubeObject } from "../client/client.ts";
import { errorMessage, isPermanentError } from "../client/errors.ts";
import { controllerOwnerKey, type OwnerMatch } from "../client/owners.ts";
import type { InformerHandlers } from "../informers/informer.ts";
import { objectKey } from "../informers/informer.ts";
import { runWorkers, WorkQueue } from "./workqueue.ts";

export interface ReconcileOutcome {
  /** Reconcile again after this long (e.g. a deadline); never sleep inside reconcile. */
  requeueAfterMs?: number;
  /** "slow": the requeue is housekeeping (a cleanup) and waits behind fresh work. */
  requeueLane?: "fast" | "slow";
}

/** What the controller tells a reconcile besides the key. */
export interface ReconcileContext {
  /** 1 on the first try; n after n-1 failed reconciles in a row (the queue's requeue count + 1). */
  attempt: number;
  /**
   * Aborted when the controller stops (the service shutting down): a reconcile passes it to its
   * long calls (fetches, waits) so they end early and the drain stays short.
   */
  signal: AbortSignal;
  /** The controller's logger, its name bound as `controller`. */
  log: Logger;
}

export interface Reconciler {
  reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileOutcome | undefined>;
}

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  log: Logger;
  concurrency?: number;
  queue?: WorkQueue;
  onDepth?: (depth: number) => void;
  /**
   * Whether this replica owns `key` (HA by buckets: the key's bucket is held here). Keys it does
   * not own are neither queued nor reconciled; all are owned when omitted.
   */
  owns?: (key: string) => boolean;
  /** Aborted when the service stops; every reconcile's signal follows it (and stop()). */
  signal?: AbortSignal;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconciler: Reconciler;
  private readonly log: Logger;
  private readonly concurrency: number;
  private readonly owns: (key: string) => boolean;
  private readonly stopController = new AbortController();
  private readonly signal: AbortSignal;
  private workers: Promise<void> | undefined;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconciler = opts.reconciler;
    this.log = opts.log.child({ controller: opts.name });
    this.concurrency = opts.concurrency ?? 4;
    this.queue = opts.queue ?? new WorkQueue({ onDepth: opts.onDepth });
    this.owns = opts.owns ?? (() => true);
    this.signal = opts.signal
      ? AbortSignal.any([opts.signal, this.stopController.signal])
      : this.stopController.signal;
  }

  enqueue(key: string): void {
    if (this.owns(key)) this.queue.add(key);
  }

  enqueueSlow(key: string): void {
    if (this.owns(key)) this.queue.addSlow(key);
  }

  enqueueAfter(key: string, ms: number, lane: "fast" | "slow" = "fast"): void {
    if (this.owns(key)) this.queue.addAfter(key, ms, lane);
  }

  /** Drops the queued keys `match` selects (a lost bucket's); returns how many. */
  drop(match: (key: string) => boolean): number {
    return this.queue.removeWhere(match);
  }

  /** Resolves once no key `match` selects is being reconciled. */
  idle(match: (key: string) => boolean): Promise<void> {
    return this.queue.idle(match);
  }

  /**
   * Informer handlers that enqueue the object's key (resyncs go to the slow lane).
   * `filter` drops objects this controller ignores; `update` decides which
   * updates matter (default: all). A controller whose own status writes would
   * otherwise wake it (and skip its backoff) passes e.g. a generation check.
   */
  handlers<T extends KubeObject>(
    opts: {
      filter?: (obj: T) => boolean;
      update?: (oldObj: T, obj: T) => boolean;
      /** Lane for new objects; "slow" lets updates of known objects (e.g. completions) go first. */
      addLane?: "fast" | "slow";
    } = {},
  ): InformerHandlers<T> {
    const filter = opts.filter ?? (() => true);
    const update = opts.update ?? (() => true);
    const add = opts.addLane === "slow" ? (k: string) => this.enqueueSlow(k) : (k: string) => this.enqueue(k);
    return {
      onAdd: (obj) => filter(obj) && add(objectKey(obj)),
      onUpdate: (old, obj) => filter(obj) && update(old, obj) && this.enqueue(objectKey(obj)),
      onDelete: (obj) => this.enqueue(objectKey(obj)),
      onResync: (obj) => filter(obj) && this.enqueueSlow(objectKey(obj)),
    };
  }

  /**
   * Handlers for a child informer that enqueue the child's controller owner (the ownerReference with
   * `controller: true`) when it matches `match`; other children are ignored. An update enqueues the
   * old and the new owner, so an owner that lost its child hears about it too. Resyncs go to the slow lane.
   */
  ownerHandlers<T extends KubeObject>(match: OwnerMatch): InformerHandlers<T> {
    const owner = (obj: T) => controllerOwnerKey(obj, match);
    const enqueue = (obj: T) => {
      const key = owner(obj);
      if (key !== undefined) this.enqueue(key);
    };
    return {
      onAdd: enqueue,
      onUpdate: (old, obj) => {
        const before = owner(old);
        const after = owner(obj);
        if (before !== undefined && before !== after) this.enqueue(before);
        if (after !== undefined) this.enqueue(after);
      },
      onDelete: enqueue,
      onResync: (obj) => {
        const key = owner(obj);
        if (key !== undefined) this.enqueueSlow(key);
      },
    };
  }

  start(): void {
    if (this.workers) return;
    this.workers = runWorkers(this.queue, this.concurrency, (key) => this.process(key), {
      onError: (key, err) => {
        this.log.warn(
          { key, err: errorMessage(err), retries: this.queue.numRequeues(key) },
          "reconcile failed, retrying",
        );
      },
    });
  }

  /** Stops handing out keys, aborts the reconciles' signal, and waits for those in flight to finish. */
  async stop(): Promise<void> {
    this.stopController.abort();
    this.queue.shutDown();
    await this.workers;
  }

  private async process(key: string): Promise<void> {
    // queued (a retry, a requeue-after) before its bucket moved to another replica
    if (!this.owns(key)) {
      this.queue.forget(key);
      return;
    }
    let outcome: ReconcileOutcome | undefined;
    try {
      outcome = await this.reconciler.reconcile(key, {
        attempt: this.queue.numRequeues(key) + 1,
        signal: this.signal,
        log: this.log,
      });
    } catch (err) {
      // wrapped PermanentErrors count too: the cause chain decides
      if (isPermanentError(err)) {
        this.log.error({ key, err: errorMessage(err) }, "reconcile failed permanently, dropping key");
        this.queue.forget(key);
        return;
      }
      throw err; // runWorkers requeues with backoff
    }
    this.queue.forget(key);
    if (outcome?.requeueAfterMs !== undefined)
      this.enqueueAfter(key, outcome.requeueAfterMs, outcome.requeueLane ?? "fast");
  }
}
