// What a watch saw of each pipe pod, stamped with when it saw it
// (performance.now() ms): created, init container running, init container
// done, the waiting container running (the pod ready to copy from), deleted.
// From these, how many pods (or running init containers) there were at once:
// what shows that pods ran side by side, not one per resolver worker.
import type { KubeClient } from "@quarry/kube";
import { type Pod, pods } from "./node.ts";

export interface PodTimeline {
  name: string;
  uid: string;
  /** The request it was made for (label quarry.dev/request). */
  request: string;
  added?: number;
  initRunning?: number;
  initDone?: number;
  /** The init container done and the waiting container running: the resolver may copy. */
  ready?: number;
  deleted?: number;
  /** The last version seen (its status has the kubelet's own whole-second timestamps). */
  last: Pod;
}

export class PodTimelines {
  /** By uid: a second pod of the same name is another timeline. */
  readonly pods = new Map<string, PodTimeline>();

  observe(type: string, pod: Pod, at: number): void {
    const uid = pod.metadata.uid ?? "";
    let t = this.pods.get(uid);
    if (!t) {
      t = {
        name: pod.metadata.name ?? "",
        uid,
        request: pod.metadata.labels?.["quarry.dev/request"] ?? "",
        last: pod,
      };
      this.pods.set(uid, t);
    }
    t.last = pod;
    t.added ??= at;
    const init = pod.status?.initContainerStatuses?.[0]?.state;
    if (init?.running || init?.terminated) t.initRunning ??= at;
    if (init?.terminated) t.initDone ??= at;
    if (init?.terminated && pod.status?.containerStatuses?.some((c) => c.state?.running)) t.ready ??= at;
    if (type === "DELETED") t.deleted ??= at;
  }

  list(): PodTimeline[] {
    return [...this.pods.values()];
  }
}

/** The kubelet's own stamps of the finished init container's run (ms since the epoch, whole seconds). */
export function initStamps(pod: Pod): { startedAt: number; finishedAt: number } | undefined {
  // harness/node.ts types only the fields the scenarios read; the API has these too
  const t = pod.status?.initContainerStatuses?.[0]?.state?.terminated as
    | { startedAt?: string; finishedAt?: string }
    | undefined;
  const startedAt = Date.parse(t?.startedAt ?? "");
  const finishedAt = Date.parse(t?.finishedAt ?? "");
  return Number.isFinite(startedAt) && Number.isFinite(finishedAt) ? { startedAt, finishedAt } : undefined;
}

/** The most intervals open at one moment; an interval without an end is open until now. */
export function maxOverlap(
  intervals: readonly (readonly [number | undefined, number | undefined])[],
): number {
  const edges: [number, number][] = [];
  for (const [from, to] of intervals) {
    if (from === undefined) continue;
    edges.push([from, 1], [to ?? Number.POSITIVE_INFINITY, -1]);
  }
  // at equal times an end goes first: touching intervals were not open together
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of edges) {
    open += d;
    max = Math.max(max, open);
  }
  return max;
}

/** Watches `namespace`'s pipe pods into `timelines` until `signal` aborts (resumes after errors). */
export async function watchPipePods(
  client: KubeClient,
  namespace: string,
  timelines: PodTimelines,
  signal: AbortSignal,
): Promise<void> {
  let resourceVersion: string | undefined;
  while (!signal.aborted) {
    try {
      for await (const e of client.watch<Pod>(
        pods,
        namespace,
        { labelSelector: "quarry.dev/pipe", resourceVersion },
        signal,
      )) {
        if (e.type === "BOOKMARK" || e.type === "ERROR") continue;
        resourceVersion = e.object.metadata.resourceVersion ?? resourceVersion;
        timelines.observe(e.type, e.object, performance.now());
      }
    } catch {
      if (!signal.aborted) await new Promise((r) => setTimeout(r, 200));
    }
  }
}
