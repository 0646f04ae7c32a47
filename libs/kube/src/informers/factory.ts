// One list/watch per resource per process, however many controllers read it
// (client-go's SharedInformerFactory): every reader asking for the same
// resource, namespaces, selectors and transform gets the same Informer, so
// they share its watch and its cache, and each adds its own handlers.
//
// The transform is part of the key, not a conflict: it decides what the cache
// holds (keepWhole keeps the managedFields dropManagedFields removes), so one
// cache cannot serve two transforms without the reader that asked for more
// silently reading less. Two readers with different transforms get one
// informer each, as the run controller (runs kept whole) and a custom task
// (managedFields dropped) would in one process. The transforms in
// transforms.ts are module-level functions, so readers naming the same one
// share; an inline arrow function is a new function every time and never
// shares.
//
// The admit filter (HA by buckets: which keys the cache holds) is part of the
// key the same way: a reader of every key cannot share a cache that skips some.
//
// The other options (resync period, watchdog, watch timeout, page size,
// stopOn) change how the one watch runs, not what it holds. A reader asking
// for other values than the informer was made with is refused with an error
// naming the option, rather than silently getting values it did not ask for.
import type { Logger } from "@quarry/observability";
import type { KubeClient, KubeObject } from "../client/client.ts";
import type { ResourceType } from "../client/resources.ts";
import { Informer, type InformerOptions } from "./informer.ts";

/** What a reader asks the factory for; the log is the factory's. */
export type InformerRequest<T extends KubeObject = KubeObject> = Omit<InformerOptions<T>, "log">;

/** Options that must agree between the readers of one shared informer. */
const RUN_OPTIONS = ["resyncMs", "watchdogMs", "watchTimeoutSeconds", "pageSize", "stopOn"] as const;
type RunOptions = Pick<InformerRequest, (typeof RUN_OPTIONS)[number]>;
type Scope = Pick<InformerRequest, "namespace" | "labelSelector" | "fieldSelector">;

interface Shared {
  /** Compared by identity: the same function is the same transform. */
  transform: unknown;
  /** Compared by identity, like the transform. */
  admit: unknown;
  run: RunOptions;
  informer: Informer<KubeObject>;
}

export class InformerFactory {
  private readonly client: KubeClient;
  private readonly log: Logger;
  /** Keyed by resource, namespaces and selectors; one entry per transform. */
  private readonly shared = new Map<string, Shared[]>();
  private readonly made: Informer<KubeObject>[] = [];

  constructor(client: KubeClient, log: Logger) {
    this.client = client;
    this.log = log;
  }

  /** The informer of `rt` as `request` asks: the one already made for an equal request, else a new one. */
  informer<T extends KubeObject>(rt: ResourceType, request: InformerRequest<T> = {}): Informer<T> {
    const key = sharingKey(rt, request);
    const entries = this.shared.get(key) ?? [];
    const found = entries.find((e) => e.transform === request.transform && e.admit === request.admit);
    if (found) {
      checkRunOptions(key, found.run, request);
      return found.informer as unknown as Informer<T>;
    }
    const informer = new Informer<T>(this.client, rt, {
      ...request,
      log: this.log.child({ informer: rt.plural }),
    });
    const shared = informer as unknown as Informer<KubeObject>;
    entries.push({ transform: request.transform, admit: request.admit, run: request, informer: shared });
    this.shared.set(key, entries);
    this.made.push(shared);
    return informer;
  }

  /** Every informer made, in the order made (each once, however many readers share it). */
  informers(): readonly Informer<KubeObject>[] {
    return this.made;
  }
}

function sharingKey(rt: ResourceType, request: Scope): string {
  // "a,b" and "b, a" watch the same namespaces
  const namespaces = (request.namespace ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean)
    .sort()
    .join(",");
  return [
    `${rt.plural}.${rt.group}/${rt.version}`,
    namespaces || "*",
    request.labelSelector ?? "",
    request.fieldSelector ?? "",
  ].join(" ");
}

function checkRunOptions(key: string, made: RunOptions, asked: RunOptions): void {
  for (const option of RUN_OPTIONS) {
    if (made[option] !== asked[option]) {
      throw new Error(
        `informer ${key}: asked with ${option} ${String(asked[option])}, but it is shared and was made with ${String(made[option])}`,
      );
    }
  }
}
