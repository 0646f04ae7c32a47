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
  logCounts,
  runBatch,
  type Sample,
  startWatch,
  Tracker,
  watchRequests,
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
}

export interface ServiceWindow {
  /** log lines by message, during the measured batch */
  logLines: Record<string, number>;
  /** the service's /metrics text before and after the measured batch ("" if unreadable) */
  metricsBefore: string;
  metricsAfter: string;
}

export interface Timeline {
  windowMs: number;
  created: number[];
  dataSeen: number[];
  done: number[];
}

const TIMELINE_WINDOW_MS = 500;

/** Counts per window: where a backlog builds up (created ≫ data seen, or data seen ≫ done) and drains. */
export function timeline(batch: BatchResult, windowMs: number): Timeline {
  const windows = Math.max(1, Math.ceil((batch.end - batch.start) / windowMs) + 1);
  const count = (at: (s: Sample) => number | undefined) => {
    const out = new Array<number>(windows).fill(0);
    for (const s of batch.samples) {
      const t = at(s);
      if (t !== undefined) out[Math.min(windows - 1, Math.floor((t - batch.start) / windowMs))]!++;
    }
    return out;
  };
  return {
    windowMs,
    created: count((s) => s.created),
    dataSeen: count((s) => s.dataSeen),
    done: count((s) => s.done),
  };
}

export interface PhaseResult {
  name: string;
  batch: BatchResult;
  completed: number;
  failed: number;
  incomplete: number;
  /** the first few failure messages */
  failures: string[];
  latencyMs: Summary;
  breakdown: Record<string, Summary>;
  notSeenInProgress: number;
  /** how many requests were created, first seen with data and first seen True in each window since the first create */
  timeline: Timeline;
  wallSeconds: number;
  throughputPerSecond: number;
  cpu: CpuUse;
  /** per resource, "VERB[/subresource] code" → count, in the measured batch (everyone's calls) */
  apiCalls: Record<string, Record<string, number>>;
  services: Record<string, ServiceWindow>;
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

function diffLogs(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

const span = (
  samples: readonly Sample[],
  from: (s: Sample) => number | undefined,
  to: (s: Sample) => number | undefined,
) =>
  roundSummary(
    summarize(
      samples.flatMap((s) => {
        const a = from(s);
        const b = to(s);
        return a !== undefined && b !== undefined ? [b - a] : [];
      }),
    ),
  );

export async function runPhase(opts: PhaseOptions): Promise<PhaseResult> {
  const { cp, namespace, services, signal } = opts;
  const resources = opts.resources ?? ["resolutionrequests"];
  const tracker = new Tracker();
  const watchStats = { restarts: 0 };
  const clientStats = { retries: 0 };
  const watch = startWatch(signal, (stop, listed) =>
    watchRequests(
      RestKubeClient.fromEnvironment(cp.adminKubeconfig),
      namespace,
      tracker,
      stop,
      watchStats,
      listed,
    ),
  );
  try {
    // a request created (and even finished) before the watch's starting point would never be seen
    await watch.ready;
    const clients = Array.from({ length: opts.concurrency }, () =>
      RestKubeClient.fromEnvironment(cp.adminKubeconfig),
    );
    const batchOf = (prefix: string, n: number) =>
      runBatch({ clients, prefix, n, tracker, signal, send: opts.send, closedLoop: opts.closedLoop });

    if (opts.warmup > 0) {
      log(`${opts.name}: warm-up, ${opts.warmup} requests`);
      const warm = await batchOf("warm", opts.warmup);
      const ok = warm.samples.filter((s) => s.done !== undefined).length;
      if (ok < opts.warmup) {
        const why =
          warm.samples.find((s) => s.failed)?.failed ?? (signal.aborted ? errorMessage(signal.reason) : "");
        throw new Error(`${opts.name}: warm-up: only ${ok}/${opts.warmup} requests succeeded ${why}`);
      }
    }

    // the services' last log lines of the warm-up reach their files (pino writes asynchronously)
    await sleep(opts.settleMs ?? FLUSH_MS);
    const countsOf = async () =>
      Promise.all(resources.map((r) => requestCounts(cp, r).catch(() => new Map<string, number>())));
    const before = {
      logs: services.map((s) => logCounts(s.logFile)),
      metrics: await Promise.all(services.map(metricsText)),
      api: await countsOf(),
    };
    const cpu = new CpuWindow({
      ...Object.fromEntries(services.map((s) => [s.name, s.pid])),
      ...opts.pids,
    });
    log(`${opts.name}: measuring, ${opts.requests} requests, ${opts.concurrency} clients`);
    const batch = await batchOf("req", opts.requests);
    const cpuUse = cpu.end();
    await sleep(opts.settleMs ?? FLUSH_MS);
    const after = {
      logs: services.map((s) => logCounts(s.logFile)),
      metrics: await Promise.all(services.map(metricsText)),
      api: await countsOf(),
    };

    const samples = batch.samples;
    const done = samples.filter((s) => s.done !== undefined);
    const failed = samples.filter((s) => s.failed !== undefined && s.done === undefined);
    const wallSeconds = (batch.end - batch.start) / 1000;
    const breakdown: Record<string, Summary> = {
      createMs: span(
        done,
        (s) => s.t0,
        (s) => s.created,
      ),
      inProgressSeenMs: span(
        done,
        (s) => s.t0,
        (s) => s.inProgress,
      ),
      dataSeenMs: span(
        done,
        (s) => s.t0,
        (s) => s.dataSeen,
      ),
      createdToDataSeenMs: span(
        done,
        (s) => s.created,
        (s) => s.dataSeen,
      ),
      dataSeenToSucceededMs: span(
        done,
        (s) => s.dataSeen,
        (s) => s.done,
      ),
    };
    if (done.some((s) => s.patched !== undefined)) {
      breakdown.statusWriteMs = span(
        done,
        (s) => s.created,
        (s) => s.patched,
      );
      breakdown.dataWrittenToSucceededMs = span(
        done,
        (s) => s.patched,
        (s) => s.done,
      );
    }
    return {
      name: opts.name,
      batch,
      completed: done.length,
      failed: failed.length,
      incomplete: opts.requests - done.length - failed.length,
      failures: [...new Set(failed.map((s) => s.failed ?? ""))].slice(0, 5),
      latencyMs: roundSummary(summarize(done.map((s) => s.done! - s.t0))),
      breakdown,
      notSeenInProgress: done.filter((s) => s.inProgress === undefined).length,
      timeline: timeline(batch, TIMELINE_WINDOW_MS),
      wallSeconds: round(wallSeconds, 2),
      throughputPerSecond: round(done.length / wallSeconds, 1),
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
      client: { retries: clientStats.retries, watchRestarts: watchStats.restarts },
    };
  } finally {
    await watch.stop();
  }
}
