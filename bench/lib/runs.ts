// Driving custom-task runs (CustomRun or Run) for benchmarks: the per-run
// timeline, a watch that stamps it (first Started, Running and Succeeded
// seen, every status write seen), and clients that create runs at a bounded
// concurrency. The ResolutionRequest counterparts are in requests.ts.
import { performance } from "node:perf_hooks";
import { type AnyRun, getCondition, type RunFlavour } from "@quarry/api";
import { resourceOf } from "@quarry/harness/runs";
import { isApiError, type KubeClient } from "@quarry/kube";
import { type BatchResult, runBatch, Settling, watchObjects, withRetry } from "./requests.ts";

/** One run's timeline: performance.now() ms unless named `…Wall` (Date.now() ms, to compare with status times). */
export interface RunSample {
  name: string;
  /** just before the create was sent */
  t0: number;
  t0Wall: number;
  /** the create returned */
  created?: number;
  /** first seen with Succeeded=Unknown (reason Started, or already Running) */
  started?: number;
  startedWall?: number;
  /** first seen with Succeeded=Unknown, reason Running */
  running?: number;
  /** first seen Succeeded=True */
  done?: number;
  doneWall?: number;
  /** status.startTime / completionTime as seen with True (second resolution) */
  startTimeMs?: number;
  completionTimeMs?: number;
  /** MODIFIED events seen up to and including the first True */
  modified: number;
  /** MODIFIED events seen after the first True (writes to a finished run) */
  modifiedAfterDone: number;
  /** Succeeded=False, or a client error */
  failed?: string;
}

const parseTime = (iso: string | undefined): number | undefined => {
  const t = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(t) ? undefined : t;
};

export class RunTracker extends Settling<RunSample> {
  observe(type: string, run: AnyRun, at: number, wall: number): void {
    const s = this.sampleOf(run.metadata.name);
    if (!s) return;
    if (type === "MODIFIED") {
      if (s.done === undefined) s.modified++;
      else s.modifiedAfterDone++;
    }
    const cond = getCondition(run, "Succeeded");
    if (!cond) return;
    if (cond.status === "Unknown") {
      if (s.started === undefined) {
        s.started = at;
        s.startedWall = wall;
      }
      if (cond.reason === "Running" && s.running === undefined) s.running = at;
    } else if (cond.status === "True" && s.done === undefined) {
      s.done = at;
      s.doneWall = wall;
      s.startTimeMs = parseTime(run.status?.startTime);
      s.completionTimeMs = parseTime(run.status?.completionTime);
      this.notify();
    } else if (cond.status === "False" && s.failed === undefined && s.done === undefined) {
      s.failed = `${cond.reason ?? "False"}: ${cond.message ?? ""}`;
      this.notify();
    }
  }
}

/**
 * Watches a namespace's runs of one flavour until `signal` aborts, resuming
 * after errors from the last resourceVersion seen. `onListed` is called once
 * the starting resourceVersion is known: runs created after that are seen
 * from their creation on.
 */
export function watchRuns(
  client: KubeClient,
  flavour: RunFlavour,
  namespace: string,
  tracker: RunTracker,
  signal: AbortSignal,
  stats: { restarts: number },
  onListed?: () => void,
): Promise<void> {
  return watchObjects<AnyRun>(
    client,
    resourceOf(flavour),
    namespace,
    (type, run, at, wall) => tracker.observe(type, run, at, wall),
    signal,
    stats,
    { onListed, what: "run watch" },
  );
}

export type RunBatch = BatchResult<RunSample>;

/**
 * `n` runs named `<prefix>-00000`…, created by `clients.length` concurrent
 * clients (`make` builds run `i`). Open loop: a client creates its next run
 * as soon as its create returns; with `closedLoop` it first waits until its
 * run is done. Resolves once every run is done or failed, or `signal` aborts.
 */
export function runRunBatch(opts: {
  clients: readonly KubeClient[];
  prefix: string;
  n: number;
  tracker: RunTracker;
  signal: AbortSignal;
  make: (name: string, i: number) => AnyRun;
  stats: { retries: number };
  closedLoop?: boolean;
}): Promise<RunBatch> {
  return runBatch<RunSample>({
    ...opts,
    sample: (name) => ({
      name,
      t0: performance.now(),
      t0Wall: Date.now(),
      modified: 0,
      modifiedAfterDone: 0,
    }),
    send: async (client, name, i, s) => {
      const run = opts.make(name, i);
      await withRetry(
        () => client.create(resourceOf(run.kind), run),
        opts.stats,
        opts.signal,
        (err) => isApiError(err, 409), // an earlier attempt did create it
      );
      s.created = performance.now();
    },
  });
}

/** The measured runs' timelines as CSV, in ms since the batch's first create. */
export function runSamplesCsv(batch: RunBatch): string {
  const rel = (t: number | undefined) => (t === undefined ? "" : (t - batch.start).toFixed(1));
  const rows = batch.samples.map((s) =>
    [
      s.name,
      rel(s.t0),
      rel(s.created),
      rel(s.started),
      rel(s.running),
      rel(s.done),
      s.startTimeMs === undefined ? "" : (s.startTimeMs - s.t0Wall).toFixed(0),
      s.doneWall === undefined ? "" : (s.doneWall - s.t0Wall).toFixed(0),
      s.modified,
      s.modifiedAfterDone,
      JSON.stringify(s.failed ?? ""),
    ].join(","),
  );
  return `${RUN_SAMPLES_CSV_HEADER}${rows.join("\n")}\n`;
}
const RUN_SAMPLES_CSV_HEADER =
  "name,t0,created,startedSeen,runningSeen,succeededSeen,startTimeMinusT0Wall,succeededSeenMinusT0Wall,modified,modifiedAfterDone,failed\n";
