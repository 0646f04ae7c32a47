// One measured phase of a benchmark: a watch on the namespace, a warm-up
// batch that is discarded, then the measured batch, with the CPU, API calls,
// log lines and /metrics of the services around it. The caller starts and
// stops the services; a benchmark may run several phases on one control plane.

import type { ControlPlane } from "@quarry/devcluster/controlplane";
import type { RunningService } from "@quarry/devcluster/service";
import { errorMessage, type KubeClient, RestKubeClient } from "@quarry/kube";
import { diffCounts, requestCounts } from "./apiserver.ts";
import { type CpuUse, CpuWindow } from "./cpu.ts";
import {
  type BatchResult,
  connections,
  logCounts,
  type Pacing,
  runBatch,
  type Sample,
  trackRequests,
} from "./requests.ts";
import { log, sleep } from "./run.ts";
import { round, roundSummary, type Summary, summarize } from "./stats.ts";

/** Settling time before reading log files and counters (not part of any figure). */
const FLUSH_MS = 300;

export interface PhaseOptions {
  /** e.g. "floor", "cluster" */
  name: string;
  cp: ControlPlane;
  namespace: string;
  /** the services whose CPU, logs and /metrics are read around the measured batch */
  services: readonly RunningService[];
  /** other processes whose CPU counts (kube-apiserver, etcd) */
  pids: Record<string, number | undefined>;
  concurrency: number;
  warmup: number;
  requests: number;
  signal: AbortSignal;
  /** the client's work for request `name` (create it, and whatever else) */
  send: (client: KubeClient, name: string, i: number, s: Sample) => Promise<void>;
  /** each client waits for its request to finish before sending the next (see runBatch) */
  closedLoop?: boolean;
  /** resources whose apiserver_request_total is diffed (default: resolutionrequests) */
  resources?: readonly string[];
  /**
   * Pause after the warm-up and after the measured batch (default 300 ms), so calls that follow a
   * request's end (a kubelet's last updates of a deleted pod) land on the right side of the counts.
   */
  settleMs?: number;
  /** open loop at a rate (warm-up and measured batch) */
  pacing?: Pacing | undefined;
  /** hears each measured request's 1-based number as it is sent */
  onSent?: ((sent: number) => void) | undefined;
}

export interface ServiceWindow {
  /** log lines by message, during the measured batch */
  logLines: Record<string, number>;
  /** the service's /metrics text before and after the measured batch ("" if unreadable) */
  metricsBefore: string;
  metricsAfter: string;
}

export type Timeline = { windowMs: number } & Record<"created" | "dataSeen" | "done", number[]>;

/** Counts per window of `windowMs` (default 500) since the batch started, one series per field of `at`: where a backlog builds up and drains. */
export function timeline<S, K extends string>(
  batch: { start: number; end: number; samples: readonly S[] },
  at: Record<K, (s: S) => number | undefined>,
  windowMs = 500,
): { windowMs: number } & Record<K, number[]> {
  const windows = Math.max(1, Math.ceil((batch.end - batch.start) / windowMs) + 1);
  const series = Object.entries<(s: S) => number | undefined>(at).map(([k, time]) => {
    const out = new Array<number>(windows).fill(0);
    for (const s of batch.samples) {
      const t = time(s);
      if (t !== undefined) out[Math.min(windows - 1, Math.floor((t - batch.start) / windowMs))]!++;
    }
    return [k, out];
  });
  return { windowMs, ...Object.fromEntries(series) } as { windowMs: number } & Record<K, number[]>;
}

export interface PhaseResult extends MeasuredWindow<BatchResult>, ReturnType<typeof outcome> {
  name: string;
  latencyMs: Summary;
  breakdown: Record<string, Summary>;
  notSeenInProgress: number;
  /** how many requests were created, first seen with data and first seen True in each window since the first create */
  timeline: Timeline;
  client: { retries: number; watchRestarts: number };
}

async function metricsText(svc: RunningService): Promise<string> {
  try {
    const res = await svc.ops("/metrics");
    return res.status === 200 ? res.body : "";
  } catch {
    return "";
  }
}

const diffLogs = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
      .filter(([, d]) => d !== 0),
  );

/** What a window around a measured batch says: CPU, API calls, each service's log lines and /metrics. */
export interface MeasuredWindow<B> {
  batch: B;
  cpu: CpuUse;
  /** per resource, "VERB[/subresource] code" → count, in the measured batch (everyone's calls) */
  apiCalls: Record<string, Record<string, number>>;
  services: Record<string, ServiceWindow>;
}

/**
 * Runs `batch` with the CPU of the services and `pids`, the apiserver's calls on `resources`, and
 * the services' log lines and /metrics read around it, pausing `settleMs` before and after.
 */
export async function aroundBatch<B>(
  opts: Pick<PhaseOptions, "cp" | "services" | "pids" | "resources" | "settleMs"> & {
    settleAfterMs?: number;
  },
  batch: () => Promise<B>,
): Promise<MeasuredWindow<B>> {
  const { cp, services } = opts;
  const resources = opts.resources ?? ["resolutionrequests"];
  const snapshot = async () => ({
    logs: services.map((s) => logCounts(s.logFile)),
    metrics: await Promise.all(services.map(metricsText)),
    api: await Promise.all(resources.map((r) => requestCounts(cp, r).catch(() => new Map<string, number>()))),
  });
  // the services' last log lines of the warm-up reach their files (pino writes asynchronously)
  await sleep(opts.settleMs ?? FLUSH_MS);
  const before = await snapshot();
  const cpu = new CpuWindow({ ...Object.fromEntries(services.map((s) => [s.name, s.pid])), ...opts.pids });
  const b = await batch();
  const cpuUse = cpu.end();
  await sleep(opts.settleAfterMs ?? opts.settleMs ?? FLUSH_MS);
  const after = await snapshot();
  return {
    batch: b,
    cpu: cpuUse,
    apiCalls: Object.fromEntries(resources.map((r, i) => [r, diffCounts(before.api[i]!, after.api[i]!)])),
    services: Object.fromEntries(
      services.map((s, i) => [
        s.name,
        {
          logLines: diffLogs(before.logs[i]!, after.logs[i]!),
          metricsBefore: before.metrics[i]!,
          metricsAfter: after.metrics[i]!,
        },
      ]),
    ),
  };
}

/** A warm-up batch that did not all succeed stops the run: what follows would measure a broken set-up. */
export function checkWarmup(
  what: string,
  samples: readonly { done?: number; failed?: string }[],
  n: number,
  signal: AbortSignal,
): void {
  const ok = samples.filter((s) => s.done !== undefined).length;
  if (ok >= n) return;
  const why = samples.find((s) => s.failed)?.failed ?? (signal.aborted ? errorMessage(signal.reason) : "");
  throw new Error(`${what}: warm-up: only ${ok}/${n} succeeded ${why}`);
}

/** How a batch of `n` ended: completed, failed, not finished, the first few failures, wall time and throughput. */
export function outcome(
  batch: { samples: readonly { done?: number; failed?: string }[]; start: number; end: number },
  n: number,
) {
  const done = batch.samples.filter((s) => s.done !== undefined);
  const failed = batch.samples.filter((s) => s.failed !== undefined && s.done === undefined);
  const wallSeconds = (batch.end - batch.start) / 1000;
  return {
    completed: done.length,
    failed: failed.length,
    incomplete: n - done.length - failed.length,
    failures: [...new Set(failed.map((s) => s.failed ?? ""))].slice(0, 5),
    wallSeconds: round(wallSeconds, 2),
    throughputPerSecond: round(done.length / wallSeconds, 1),
  };
}

/** A point of a request's timeline. */
type Stamp = Exclude<keyof Sample, "name" | "failed">;

export async function runPhase(opts: PhaseOptions): Promise<PhaseResult> {
  const { cp, namespace, signal } = opts;
  const watch = trackRequests(signal, RestKubeClient.fromEnvironment(cp.adminKubeconfig), namespace);
  const { tracker, stats: watchStats } = watch;
  try {
    // a request created (and even finished) before the watch's starting point would never be seen
    await watch.ready;
    const clients = connections(cp.adminKubeconfig, opts.concurrency);
    const batchOf = (prefix: string, n: number, onSent?: (sent: number) => void) =>
      runBatch({
        clients,
        prefix,
        n,
        tracker,
        signal,
        send: opts.send,
        closedLoop: opts.closedLoop,
        pacing: opts.pacing,
        onSent,
      });
    if (opts.warmup > 0) {
      log(`${opts.name}: warm-up, ${opts.warmup} requests`);
      checkWarmup(opts.name, (await batchOf("warm", opts.warmup)).samples, opts.warmup, signal);
    }
    const w = await aroundBatch(opts, () => {
      log(`${opts.name}: measuring, ${opts.requests} requests, ${opts.concurrency} clients`);
      return batchOf("req", opts.requests, opts.onSent);
    });
    const done = w.batch.samples.filter((s) => s.done !== undefined);
    // from one point of a request's timeline to another, over the requests that have both
    const span = (from: Stamp, to: Stamp) => spanOf(done, (s) => diff(s[from], s[to]));
    const breakdown: Record<string, Summary> = {
      createMs: span("t0", "created"),
      inProgressSeenMs: span("t0", "inProgress"),
      dataSeenMs: span("t0", "dataSeen"),
      createdToDataSeenMs: span("created", "dataSeen"),
      dataSeenToSucceededMs: span("dataSeen", "done"),
    };
    if (done.some((s) => s.patched !== undefined)) {
      breakdown.statusWriteMs = span("created", "patched");
      breakdown.dataWrittenToSucceededMs = span("patched", "done");
    }
    return {
      name: opts.name,
      ...w,
      ...outcome(w.batch, opts.requests),
      latencyMs: spanOf(done, (s) => s.done! - s.t0),
      breakdown,
      notSeenInProgress: done.filter((s) => s.inProgress === undefined).length,
      // created ≫ data seen, or data seen ≫ done: a backlog
      timeline: timeline(w.batch, {
        created: (s) => s.created,
        dataSeen: (s) => s.dataSeen,
        done: (s) => s.done,
      }),
      client: { retries: 0, watchRestarts: watchStats.restarts },
    };
  } finally {
    await watch.stop();
  }
}

export const diff = (a: number | undefined, b: number | undefined): number | undefined =>
  a !== undefined && b !== undefined ? b - a : undefined;

/** The rounded summary of `value` over the samples that have one. */
export function spanOf<S>(samples: readonly S[], value: (s: S) => number | undefined, digits = 1): Summary {
  return roundSummary(
    summarize(
      samples.flatMap((s) => {
        const v = value(s);
        return v === undefined ? [] : [v];
      }),
    ),
    digits,
  );
}
