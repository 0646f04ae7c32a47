// Custom-task runs (CustomRun or Run) measured as requests.ts measures ResolutionRequests: the
// per-run timeline, the tracker a watch stamps it with, and its CSV.
import { performance } from "node:perf_hooks";
import { type AnyRun, getCondition, type RunFlavour } from "@quarry/api";
import { resourceOf } from "@quarry/harness/runs";
import { isApiError, type KubeClient, RestKubeClient } from "@quarry/kube";
import { type BatchResult, Settling, startWatch, watchObjects, withRetry } from "./requests.ts";

/** One run's timeline: performance.now() ms, but `…Wall` (Date.now() ms, to compare with status times). */
export interface RunSample {
  name: string;
  /** just before the create was sent */
  t0: number;
  t0Wall: number;
  created?: number;
  /** first seen Succeeded=Unknown (reason Started, or already Running) */
  started?: number;
  startedWall?: number;
  /** first seen Succeeded=Unknown, reason Running */
  running?: number;
  /** first seen Succeeded=True */
  done?: number;
  doneWall?: number;
  /** status.startTime as seen with True (whole seconds) */
  startTimeMs?: number;
  /** MODIFIED events seen up to and including the first True, and after it (writes to a finished run) */
  modified: number;
  modifiedAfterDone: number;
  /** Succeeded=False, or a client error */
  failed?: string;
}

export type RunBatch = BatchResult<RunSample>;

class RunTracker extends Settling<RunSample> {
  observe(type: string, run: AnyRun, at: number, wall: number): void {
    const s = this.sampleOf(run.metadata.name);
    if (!s) return;
    if (type === "MODIFIED") {
      if (s.done === undefined) s.modified++;
      else s.modifiedAfterDone++;
    }
    const cond = getCondition(run, "Succeeded");
    if (cond?.status === "Unknown") {
      if (s.started === undefined) {
        s.started = at;
        s.startedWall = wall;
      }
      if (cond.reason === "Running") s.running ??= at;
    } else if (cond?.status === "True" && s.done === undefined) {
      s.done = at;
      s.doneWall = wall;
      const start = Date.parse(run.status?.startTime ?? "");
      s.startTimeMs = Number.isNaN(start) ? undefined : start;
      this.notify();
    } else if (cond?.status === "False" && s.failed === undefined && s.done === undefined) {
      s.failed = `${cond.reason ?? "False"}: ${cond.message ?? ""}`;
      this.notify();
    }
  }
}

/** A RunTracker fed by a watch on `namespace`'s runs (`ready` once it has listed; `stats.restarts`). */
export function trackRuns(signal: AbortSignal, kubeconfig: string, flavour: RunFlavour, namespace: string) {
  const tracker = new RunTracker();
  const stats = { restarts: 0 };
  const observe = (type: string, run: AnyRun, at: number, wall: number) =>
    tracker.observe(type, run, at, wall);
  const watch = startWatch(signal, (stop, onListed) =>
    watchObjects<AnyRun>(
      RestKubeClient.fromEnvironment(kubeconfig),
      resourceOf(flavour),
      namespace,
      observe,
      stop,
      stats,
      {
        onListed,
        what: "run watch",
      },
    ),
  );
  return { tracker, stats, ...watch };
}

/** runBatch's `sample` and `send` for runs `make` builds: created with retries (a 409 on a retry: an earlier attempt did). */
export const runClient = (
  make: (name: string) => AnyRun,
  stats: { retries: number },
  signal: AbortSignal,
) => ({
  sample: (name: string): RunSample => ({
    name,
    t0: performance.now(),
    t0Wall: Date.now(),
    modified: 0,
    modifiedAfterDone: 0,
  }),
  send: async (client: KubeClient, name: string, _i: number, s: RunSample) => {
    const run = make(name);
    await withRetry(
      () => client.create(resourceOf(run.kind), run),
      stats,
      signal,
      (e) => isApiError(e, 409),
    );
    s.created = performance.now();
  },
});

/** The CSV's columns: ms since the batch's first create, but the `…MinusT0Wall` ones (since the run's own t0). */
const CSV: readonly [string, (s: RunSample, rel: (t?: number) => string) => string | number][] = [
  ["name", (s) => s.name],
  ["t0", (s, rel) => rel(s.t0)],
  ["created", (s, rel) => rel(s.created)],
  ["startedSeen", (s, rel) => rel(s.started)],
  ["runningSeen", (s, rel) => rel(s.running)],
  ["succeededSeen", (s, rel) => rel(s.done)],
  ["startTimeMinusT0Wall", (s) => (s.startTimeMs === undefined ? "" : (s.startTimeMs - s.t0Wall).toFixed(0))],
  ["succeededSeenMinusT0Wall", (s) => (s.doneWall === undefined ? "" : (s.doneWall - s.t0Wall).toFixed(0))],
  ["modified", (s) => s.modified],
  ["modifiedAfterDone", (s) => s.modifiedAfterDone],
  ["failed", (s) => JSON.stringify(s.failed ?? "")],
];

/** The measured runs' timelines as CSV. */
export function runSamplesCsv(batch: RunBatch): string {
  const rel = (t?: number) => (t === undefined ? "" : (t - batch.start).toFixed(1));
  const rows = batch.samples.map((s) => CSV.map(([, cell]) => cell(s, rel)).join(","));
  return [CSV.map(([h]) => h).join(","), ...rows, ""].join("\n");
}
