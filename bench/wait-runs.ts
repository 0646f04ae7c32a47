// Benchmark: TEP-0002 Wait runs end to end. A private control plane with
// Quarry's API (its run CRDs included), the real run-controller and wait-task
// (examples/wait-task, on libs/customtask-sdk) processes under their shipped
// RBAC, and --concurrency clients creating --runs CustomRuns (or Runs) of
// `wait.testing.tekton.dev/v1beta1` Wait with `duration` --duration. Latency
// = Succeeded=True seen on a watch − just before the create was sent; the
// overhead is the time a run does not spend waiting (create → Started seen,
// plus startTime + duration → True seen). Compared with the lifecycle API
// floor, measured first on the same control plane (--no-floor skips it).
//
//   node bench/wait-runs.ts [--runs 1000] [--duration 1s] [--concurrency 16] [--json out.json]
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import type { AnyRun, RunFlavour } from "@quarry/api";
import type { ControlPlane } from "@quarry/devcluster/controlplane";
import type { RunningService } from "@quarry/devcluster/service";
import { errorMessage, parseDuration, RestKubeClient, settingsFromEnv } from "@quarry/kube";
import { resourceOf, runObject, WAIT_REF } from "../e2e/harness/runs.ts";
import { newScenario } from "../e2e/harness/scenario.ts";
import { diffCounts, requestCounts } from "./lib/apiserver.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { type CpuUse, CpuWindow } from "./lib/cpu.ts";
import { loadOptions, loadSizes } from "./lib/flags.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import type { FloorRun } from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { calls, controlPlaneVersions, machineInfo, ms } from "./lib/report.ts";
import { logCounts, startWatch } from "./lib/requests.ts";
import { BoundedRun, log, sleep } from "./lib/run.ts";
import {
  type RunBatch,
  type RunSample,
  RunTracker,
  runRunBatch,
  runSamplesCsv,
  watchRuns,
} from "./lib/runs.ts";
import { BenchServices, logWarnings, MiB, type ServiceFigures } from "./lib/service-stats.ts";
import { round, roundSummary, type Summary, summarize, table } from "./lib/stats.ts";

const USAGE = `usage: node bench/wait-runs.ts [options]
  --runs N          measured runs (default 1000)
  --duration D      each Wait's duration param (default 1s)
  --concurrency N   in-flight clients creating runs (default 16)
  --flavour F       CustomRun (tekton.dev/v1beta1, default) or Run (tekton.dev/v1alpha1)
  --warmup N        runs created and discarded before measuring (default 20; 0 disables)
  --closed-loop     each client waits until its run is Succeeded before creating the next
                    (default: open loop, a client creates its next run as soon as the create returns)
  --no-floor        skip the same-run lifecycle floor (compare with docs/performance.md only)
  --settle S        seconds to keep watching after the last run is done, for late writes (default 3)
  --deadline S      the whole run stops after S seconds, torn down either way (default 600)
  --log-level L     the services' LOG_LEVEL (default info, the services' own default)
  --json FILE       also write the JSON result to FILE
  --samples FILE    write every measured run's timeline (ms since the first create) as CSV
  --node-options=S  NODE_OPTIONS for run-controller and wait-task (e.g. --node-options=--max-old-space-size=128)
  --logs DIR        copy the services' log files to DIR before teardown (the control plane's go with it)
The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).`;

const { requests: _requests, ...shared } = loadOptions({ requests: "1000", deadline: "600" });
const { values: flags } = parseArgs({
  allowNegative: true,
  options: {
    ...shared,
    runs: { type: "string", default: "1000" },
    duration: { type: "string", default: "1s" },
    flavour: { type: "string", default: "CustomRun" },
    floor: { type: "boolean", default: true },
    "closed-loop": { type: "boolean", default: false },
    settle: { type: "string", default: "3" },
    logs: { type: "string" },
    "node-options": { type: "string" },
  },
});
const sizes = loadSizes({ ...flags, requests: flags.runs }, USAGE);
const N = sizes.requests;
const CONCURRENCY = sizes.concurrency;
const WARMUP = sizes.warmup;
const DEADLINE_S = sizes.deadlineSeconds;
const LOG_LEVEL = flags["log-level"];
const WITH_FLOOR = flags.floor;
const CLOSED_LOOP = flags["closed-loop"];
const DURATION = flags.duration;
const SETTLE_S = Number(flags.settle);
let durationMs: number;
try {
  durationMs = parseDuration(DURATION);
} catch (err) {
  console.error(`--duration: ${errorMessage(err)}\n${USAGE}`);
  process.exit(2);
}
if (flags.flavour !== "CustomRun" && flags.flavour !== "Run") {
  console.error(`--flavour must be CustomRun or Run, got "${flags.flavour}"\n${USAGE}`);
  process.exit(2);
}
if (!(SETTLE_S >= 0)) {
  console.error(`--settle must be a number of seconds >= 0, got "${flags.settle}"\n${USAGE}`);
  process.exit(2);
}
const FLAVOUR: RunFlavour = flags.flavour;
const PLURAL = resourceOf(FLAVOUR).plural;

/** Settling time before reading log files and counters (not part of any figure). */
const FLUSH_MS = 300;
const TIMELINE_WINDOW_MS = 500;
/** The services' controllers (ServiceRuntime names): the run-controller's and the Wait's, per flavour. */
const RUN_CONTROLLER = `run-${FLAVOUR.toLowerCase()}`;
const WAIT_CONTROLLER = `wait-task-${FLAVOUR.toLowerCase()}`;

async function metricsText(svc: RunningService): Promise<string> {
  try {
    const res = await svc.ops("/metrics");
    return res.status === 200 ? res.body : "";
  } catch {
    return "";
  }
}

const spanOf = (
  samples: readonly RunSample[],
  value: (s: RunSample) => number | undefined,
  digits = 1,
): Summary =>
  roundSummary(
    summarize(
      samples.flatMap((s) => {
        const v = value(s);
        return v === undefined ? [] : [v];
      }),
    ),
    digits,
  );

const diff = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined ? b - a : undefined;

interface RunsPhase {
  batch: RunBatch;
  completed: number;
  failed: number;
  incomplete: number;
  failures: string[];
  wallSeconds: number;
  throughputPerSecond: number;
  createsPerSecond: number;
  cpu: CpuUse;
  /** per resource, "VERB[/subresource] code" → count, measured runs through the settle time */
  apiCalls: Record<string, Record<string, number>>;
  logLines: Record<string, Record<string, number>>;
  metricsBefore: Record<string, string>;
  metricsAfter: Record<string, string>;
  client: { retries: number; watchRestarts: number };
}

/** The Wait runs: warm-up, then the measured batch, its CPU, API calls, log lines and /metrics. */
async function measureRuns(opts: {
  cp: ControlPlane;
  namespace: string;
  services: readonly RunningService[];
  pids: Record<string, number | undefined>;
  signal: AbortSignal;
}): Promise<RunsPhase> {
  const { cp, namespace, services, signal } = opts;
  const tracker = new RunTracker();
  const watchStats = { restarts: 0 };
  const clientStats = { retries: 0 };
  const watch = startWatch(signal, (stop, listed) =>
    watchRuns(
      RestKubeClient.fromEnvironment(cp.adminKubeconfig),
      FLAVOUR,
      namespace,
      tracker,
      stop,
      watchStats,
      listed,
    ),
  );
  try {
    await watch.ready;
    const clients = Array.from({ length: CONCURRENCY }, () =>
      RestKubeClient.fromEnvironment(cp.adminKubeconfig),
    );
    const make = (name: string): AnyRun =>
      runObject(FLAVOUR, namespace, { name, ref: WAIT_REF, params: [{ name: "duration", value: DURATION }] });
    const batchOf = (prefix: string, n: number) =>
      runRunBatch({ clients, prefix, n, tracker, signal, make, stats: clientStats, closedLoop: CLOSED_LOOP });

    if (WARMUP > 0) {
      log(`runs: warm-up, ${WARMUP} runs`);
      const warm = await batchOf("warm", WARMUP);
      const ok = warm.samples.filter((s) => s.done !== undefined).length;
      if (ok < WARMUP) {
        const why =
          warm.samples.find((s) => s.failed)?.failed ?? (signal.aborted ? errorMessage(signal.reason) : "");
        throw new Error(`runs: warm-up: only ${ok}/${WARMUP} runs succeeded ${why}`);
      }
    }
    await sleep(FLUSH_MS);
    const resources = [PLURAL, "resolutionrequests", "events"];
    const countsOf = () =>
      Promise.all(resources.map((r) => requestCounts(cp, r).catch(() => new Map<string, number>())));
    const before = {
      logs: services.map((s) => logCounts(s.logFile)),
      metrics: await Promise.all(services.map(metricsText)),
      api: await countsOf(),
    };
    const cpu = new CpuWindow({ ...Object.fromEntries(services.map((s) => [s.name, s.pid])), ...opts.pids });
    log(`runs: measuring, ${N} ${FLAVOUR}s of Wait ${DURATION}, ${CONCURRENCY} clients`);
    const batch = await batchOf("run", N);
    const cpuUse = cpu.end();
    // late writes (to finished runs) and Events land here; the watch keeps counting them
    await sleep(Math.max(FLUSH_MS, SETTLE_S * 1000));
    const after = {
      logs: services.map((s) => logCounts(s.logFile)),
      metrics: await Promise.all(services.map(metricsText)),
      api: await countsOf(),
    };
    const samples = batch.samples;
    const done = samples.filter((s) => s.done !== undefined);
    const failed = samples.filter((s) => s.failed !== undefined && s.done === undefined);
    const wallSeconds = (batch.end - batch.start) / 1000;
    const lastCreate = Math.max(batch.start, ...samples.flatMap((s) => (s.created ? [s.created] : [])));
    const diffLogs = (b: Record<string, number>, a: Record<string, number>) =>
      Object.fromEntries(
        Object.entries(a).flatMap(([k, v]) => (v - (b[k] ?? 0) ? [[k, v - (b[k] ?? 0)]] : [])),
      );
    return {
      batch,
      completed: done.length,
      failed: failed.length,
      incomplete: N - done.length - failed.length,
      failures: [...new Set(failed.map((s) => s.failed ?? ""))].slice(0, 5),
      wallSeconds: round(wallSeconds, 2),
      throughputPerSecond: round(done.length / wallSeconds, 1),
      createsPerSecond: round(samples.length / Math.max(0.001, (lastCreate - batch.start) / 1000), 1),
      cpu: cpuUse,
      apiCalls: Object.fromEntries(resources.map((r, i) => [r, diffCounts(before.api[i]!, after.api[i]!)])),
      logLines: Object.fromEntries(
        services.map((s, i) => [s.name, diffLogs(before.logs[i]!, after.logs[i]!)]),
      ),
      metricsBefore: Object.fromEntries(services.map((s, i) => [s.name, before.metrics[i]!])),
      metricsAfter: Object.fromEntries(services.map((s, i) => [s.name, after.metrics[i]!])),
      client: { retries: clientStats.retries, watchRestarts: watchStats.restarts },
    };
  } finally {
    await watch.stop();
  }
}

/** A controller's work queue over the measured window, from its service's /metrics. */
function queueView(p: RunsPhase, service: string, controller: string) {
  const before = p.metricsBefore[service] ?? "";
  const after = p.metricsAfter[service] ?? "";
  const d = (metric: string) =>
    promSum(after, metric, { controller }) - promSum(before, metric, { controller });
  const reconciles = d("quarry_workqueue_work_duration_seconds_count");
  const waits = d("quarry_workqueue_queue_duration_seconds_count");
  return {
    reconciles,
    reconcilesPerRun: round(reconciles / N, 2),
    adds: d("quarry_workqueue_adds_total"),
    retries: d("quarry_workqueue_retries_total"),
    meanWorkMs: reconciles
      ? round((d("quarry_workqueue_work_duration_seconds_sum") / reconciles) * 1000, 2)
      : 0,
    meanQueueWaitMs: waits ? round((d("quarry_workqueue_queue_duration_seconds_sum") / waits) * 1000, 1) : 0,
  };
}

/** Counts per window since the first create: where a backlog builds up and drains. */
function timeline(batch: RunBatch) {
  const windows = Math.max(1, Math.ceil((batch.end - batch.start) / TIMELINE_WINDOW_MS) + 1);
  const count = (at: (s: RunSample) => number | undefined) => {
    const out = new Array<number>(windows).fill(0);
    for (const s of batch.samples) {
      const t = at(s);
      if (t !== undefined) out[Math.min(windows - 1, Math.floor((t - batch.start) / TIMELINE_WINDOW_MS))]!++;
    }
    return out;
  };
  return {
    windowMs: TIMELINE_WINDOW_MS,
    created: count((s) => s.created),
    startedSeen: count((s) => s.started),
    succeededSeen: count((s) => s.done),
  };
}

/** Successful writes (not reads or watches) in a resource's "VERB[/sub] code" counts. */
function writes(c: Record<string, number> | undefined): number {
  return Object.entries(c ?? {})
    .filter(([k]) => /^(POST|PUT|PATCH|DELETE|APPLY)\b/.test(k) && / 2\d\d$/.test(k))
    .reduce((a, [, v]) => a + v, 0);
}

// ---- the run ----

const run = new BoundedRun(DEADLINE_S);
const runStart = performance.now();
let cp: ControlPlane | undefined;
const services = new BenchServices(run, LOG_LEVEL);
let exitCode = 1;

try {
  const versions = controlPlaneVersions();
  const {
    cp: plane,
    pids: cpPids,
    info,
  } = await startBenchControlPlane(run, (started) => {
    cp = started;
  });

  // ---- the floor, first, in its own namespace with its own lifecycle-controller ----
  let floor: FloorRun | undefined;
  if (WITH_FLOOR) {
    floor = await runSameRunFloor({
      info,
      cp: plane,
      pids: cpPids,
      start: services.start,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      requests: N,
      signal: run.signal,
      clientStats: { retries: 0 },
      closedLoop: CLOSED_LOOP,
    });
  }

  // ---- the Wait runs ----
  const scn = await newScenario("bench-wait", { cp: info });
  const nodeOptions: Record<string, string> = flags["node-options"]
    ? { NODE_OPTIONS: flags["node-options"] }
    : {};
  const rc = await services.start(scn, "run-controller", nodeOptions);
  const wt = await services.start(scn, "wait-task", nodeOptions);
  const phase = await measureRuns({
    cp: plane,
    namespace: scn.namespace,
    services: [rc.svc, wt.svc],
    pids: cpPids,
    signal: run.signal,
  });
  // RSS once the burst is over (after the settle time), beside the peak
  const rssAtEndMiB = {
    "run-controller": MiB(vmKiB(rc.svc.pid, "VmRSS")),
    "wait-task": MiB(vmKiB(wt.svc.pid, "VmRSS")),
  };
  const controllers: Record<string, ServiceFigures & { rssAtEndMiB: number }> = {
    "run-controller": { ...(await rc.stats.final()), rssAtEndMiB: rssAtEndMiB["run-controller"] },
    "wait-task": { ...(await wt.stats.final()), rssAtEndMiB: rssAtEndMiB["wait-task"] },
  };
  run.finish();

  // ---- report ----
  const done = phase.batch.samples.filter((s) => s.done !== undefined);
  const latency = spanOf(done, (s) => s.done! - s.t0);
  const startDelay = spanOf(done, (s) => diff(s.t0, s.started));
  const lateness = spanOf(done, (s) =>
    s.startTimeMs === undefined ? undefined : s.doneWall! - (s.startTimeMs + durationMs),
  );
  const overhead = spanOf(done, (s) =>
    s.startTimeMs === undefined || s.startedWall === undefined
      ? undefined
      : s.startedWall - s.t0Wall + (s.doneWall! - (s.startTimeMs + durationMs)),
  );
  const breakdown = {
    createMs: spanOf(done, (s) => diff(s.t0, s.created)),
    latencyMinusDurationMs: spanOf(done, (s) => s.done! - s.t0 - durationMs),
    startDelayMs: startDelay,
    startedToRunningSeenMs: spanOf(done, (s) => diff(s.started, s.running)),
    latenessMs: lateness,
    overheadMs: overhead,
    // what the Wait actually waited: Started seen → True seen (startTime has second resolution)
    startedToSucceededSeenMs: spanOf(done, (s) => diff(s.started, s.done)),
    startTimeTruncatedMs: spanOf(done, (s) =>
      s.startTimeMs === undefined ? undefined : s.startedWall! - s.startTimeMs,
    ),
  };
  const modified = spanOf(done, (s) => s.modified, 2);
  const modifiedHistogram: Record<string, number> = {};
  for (const s of done) modifiedHistogram[s.modified] = (modifiedHistogram[s.modified] ?? 0) + 1;
  const lateWrites = done.reduce((a, s) => a + s.modifiedAfterDone, 0);
  const notSeenStarted = done.filter((s) => s.started === undefined).length;
  const notSeenRunning = done.filter((s) => s.running === undefined).length;
  const runCalls = phase.apiCalls[PLURAL] ?? {};
  const statusPatches = runCalls["PATCH/status 200"] ?? 0;
  const conflicts = runCalls["PATCH/status 409"] ?? 0;
  const requestCreates = Object.entries(phase.apiCalls.resolutionrequests ?? {})
    .filter(([k]) => k.startsWith("POST"))
    .reduce((a, [, v]) => a + v, 0);
  const eventWrites = writes(phase.apiCalls.events);
  // every successful write on the three resources, less the bench's own creates
  const controllerWrites = writes(runCalls) - N + writes(phase.apiCalls.resolutionrequests) + eventWrites;
  const queues = {
    "run-controller": queueView(phase, "run-controller", RUN_CONTROLLER),
    "wait-task": queueView(phase, "wait-task", WAIT_CONTROLLER),
  };
  const warnings = {
    "run-controller": logWarnings(rc.svc),
    "wait-task": logWarnings(wt.svc),
  };
  const enforcements = phase.logLines["run-controller"]?.["enforced the custom-task contract"] ?? 0;
  const documented = documentedFloor();
  const perRun = (n: number) => round(n / N, 2);
  const cpuTotal = Object.values(phase.cpu.processes).reduce((a, b) => a + b, 0) + phase.cpu.benchDriver;

  const result = {
    benchmark: "wait-runs",
    date: new Date().toISOString(),
    params: {
      runs: N,
      duration: DURATION,
      flavour: FLAVOUR,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      closedLoop: CLOSED_LOOP,
      withFloor: WITH_FLOOR,
      settleSeconds: SETTLE_S,
      logLevel: LOG_LEVEL,
      nodeOptions: flags["node-options"],
      runFlavoursServed: process.env.QUARRY_RUN_FLAVOURS ?? "Run,CustomRun (default)",
      controllerConcurrency: process.env.QUARRY_CONCURRENCY ?? `${settingsFromEnv({}).concurrency} (default)`,
    },
    aborted: run.signal.aborted ? errorMessage(run.signal.reason) : undefined,
    runs: {
      completed: phase.completed,
      failed: phase.failed,
      incomplete: phase.incomplete,
      failures: phase.failures,
      latencyMs: latency,
      breakdown,
      notSeenStarted,
      notSeenRunning,
      wallSeconds: phase.wallSeconds,
      throughputPerSecond: phase.throughputPerSecond,
      createsPerSecond: phase.createsPerSecond,
      timeline: timeline(phase.batch),
      writes: {
        statusPatchesPerRun: perRun(statusPatches),
        conflictsPerRun: perRun(conflicts),
        modifiedEventsPerRun: modified,
        modifiedEventsHistogram: modifiedHistogram,
        writesAfterSucceeded: lateWrites,
        requestCreates,
        eventsPerRun: perRun(eventWrites),
        controllerWritesPerRun: perRun(controllerWrites),
      },
      queues,
      enforcements,
      controllers: Object.fromEntries(
        Object.entries(controllers).map(([name, f]) => [
          name,
          { ...f, cpuSecondsMeasured: phase.cpu.processes[name], logLines: phase.logLines[name] ?? {} },
        ]),
      ),
      warnings,
      cpuSecondsMeasured: phase.cpu,
      cpuMsPerRun: round((cpuTotal * 1000) / Math.max(1, phase.completed), 2),
      apiCalls: phase.apiCalls,
      client: phase.client,
    },
    floor: floor
      ? {
          latencyMs: floor.phase.latencyMs,
          breakdown: floor.phase.breakdown,
          wallSeconds: floor.phase.wallSeconds,
          throughputPerSecond: floor.phase.throughputPerSecond,
          cpuSecondsMeasured: floor.phase.cpu,
          apiCalls: floor.phase.apiCalls,
          controller: floor.controller,
        }
      : undefined,
    overFloor: {
      // the Wait's own overhead (start delay + lateness) against the floor's whole latency
      sameRun: floor
        ? {
            overheadP50Ms: round(overhead.p50 - floor.phase.latencyMs.p50, 1),
            overheadP99Ms: round(overhead.p99 - floor.phase.latencyMs.p99, 1),
            overheadRatioP50: round(overhead.p50 / floor.phase.latencyMs.p50, 2),
          }
        : undefined,
      documented:
        documented instanceof Error
          ? { error: documented.message }
          : {
              floor: documented,
              overheadP50Ms: round(overhead.p50 - documented.p50, 1),
              overheadP99Ms: round(overhead.p99 - documented.p99, 1),
            },
    },
    machine: machineInfo(versions),
    setupSeconds: round((phase.batch.start - runStart) / 1000, 1),
  };

  const w = result.runs.writes;
  const tl = result.runs.timeline;
  const svcRows: [string, string][] = Object.entries(controllers).map(([name, f]) => [
    `  ${name}`,
    `peak RSS (VmHWM) ${f.peakRssMiB} MiB (sampled max ${f.sampledMaxRssMiB}, at ready ${f.rssAtReadyMiB}, at end ${f.rssAtEndMiB}); CPU ${f.cpuSeconds} s total (startup ${f.cpuSecondsStartup} s, measured ${phase.cpu.processes[name]} s)`,
  ]);
  const queueRows: [string, string][] = Object.entries(queues).map(([name, q]) => [
    `  ${name} queue`,
    `${q.reconciles} reconciles (${q.reconcilesPerRun}/run), ${q.adds} adds, ${q.retries} retries; mean reconcile ${q.meanWorkMs} ms, mean queue wait ${q.meanQueueWaitMs} ms`,
  ]);
  const rows: [string, string][] = [
    [
      `Wait runs (${FLAVOUR})`,
      `${N} runs of ${DURATION}, ${CONCURRENCY} clients${CLOSED_LOOP ? " (closed loop)" : ""} (warm-up ${WARMUP})`,
    ],
    ["  completed", `${phase.completed}/${N} (failed ${phase.failed}, incomplete ${phase.incomplete})`],
    ...phase.failures.map((f): [string, string] => ["  failure", f]),
    ["  latency ms (create → True)", ms(latency)],
    ["    − duration", ms(breakdown.latencyMinusDurationMs)],
    ["    create", ms(breakdown.createMs)],
    ["    create → Started seen", `${ms(startDelay)}; never seen ${notSeenStarted}`],
    ["    Started → Running seen", `${ms(breakdown.startedToRunningSeenMs)}; never seen ${notSeenRunning}`],
    ["    Started → True seen", ms(breakdown.startedToSucceededSeenMs)],
    ["    due → True seen", `${ms(lateness)}  (due = status.startTime + duration)`],
    ["    startTime truncation", `${ms(breakdown.startTimeTruncatedMs)}  (Started seen − status.startTime)`],
    ["  overhead ms", `${ms(overhead)}  (create → Started seen + due → True seen)`],
    ["  wall time", `${phase.wallSeconds} s (creates at ${phase.createsPerSecond}/s)`],
    ["  throughput", `${phase.throughputPerSecond} runs/s`],
    [`  per ${tl.windowMs} ms: created`, tl.created.join(" ")],
    ["                 Started seen", tl.startedSeen.join(" ")],
    ["                 True seen", tl.succeededSeen.join(" ")],
    [
      "  writes per run",
      `status PATCHes ${w.statusPatchesPerRun} (409s ${w.conflictsPerRun}), Events ${w.eventsPerRun}, ResolutionRequests created ${w.requestCreates}; all controller writes ${w.controllerWritesPerRun}`,
    ],
    [
      "  MODIFIED seen per run",
      `${ms(modified)}; by count ${JSON.stringify(modifiedHistogram)}; after True: ${lateWrites} (settle ${SETTLE_S} s)`,
    ],
    ...queueRows,
    ["  enforcements", String(enforcements)],
    ...svcRows,
    [
      "  CPU in measured phase",
      `kube-apiserver ${phase.cpu.processes["kube-apiserver"]} s, etcd ${phase.cpu.processes.etcd} s, bench driver ${phase.cpu.benchDriver} s; machine ${phase.cpu.machine} s of ${round(phase.wallSeconds * cpus().length, 2)} s available, foreign ${phase.cpu.foreign} s`,
    ],
    ["  CPU per run", `${result.runs.cpuMsPerRun} ms (all processes of the run)`],
    ...Object.entries(phase.apiCalls).map(([r, c]): [string, string] => [`  API calls: ${r}`, calls(c)]),
    [
      "  warnings",
      Object.entries(warnings)
        .map(([k, v]) => `${k}: ${calls(v)}`)
        .join("; "),
    ],
    ["  client", `${phase.client.retries} retries, ${phase.client.watchRestarts} watch restarts`],
  ];
  if (floor) {
    const f = floor.phase;
    rows.push(
      ["", ""],
      ["floor (same run)", `${N} requests, ${CONCURRENCY} clients (warm-up ${WARMUP})`],
      ["  completed", `${f.completed}/${N} (failed ${f.failed}, incomplete ${f.incomplete})`],
      ["  latency ms", ms(f.latencyMs)],
      ["  wall time / throughput", `${f.wallSeconds} s, ${f.throughputPerSecond} requests/s`],
      [
        "  lifecycle-controller",
        `peak RSS (VmHWM) ${floor.controller.peakRssMiB} MiB; CPU ${floor.controller.cpuSeconds} s total`,
      ],
      [
        "  CPU in measured phase",
        `kube-apiserver ${f.cpu.processes["kube-apiserver"]} s, etcd ${f.cpu.processes.etcd} s; foreign ${f.cpu.foreign} s`,
      ],
      ["  API calls", calls(f.apiCalls.resolutionrequests ?? {})],
    );
  }
  rows.push(["", ""]);
  const same = result.overFloor.sameRun;
  if (same)
    rows.push([
      "overhead over the floor",
      `+${same.overheadP50Ms} ms p50, +${same.overheadP99Ms} ms p99 (overhead ×${same.overheadRatioP50} of the floor's p50)`,
    ]);
  const doc = result.overFloor.documented;
  rows.push(
    "error" in doc
      ? ["over the documented floor", `unavailable: ${doc.error}`]
      : [
          "over the documented floor",
          `+${doc.overheadP50Ms} ms p50, +${doc.overheadP99Ms} ms p99 over p50 ${doc.floor.p50} / p99 ${doc.floor.p99} ms (${doc.floor.requests} requests, another run)`,
        ],
    [
      "machine",
      `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}`,
    ],
    ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
  );
  const rc2 = controllers["run-controller"]!;
  const wt2 = controllers["wait-task"]!;
  const markdown = `| ${N} | ${latency.p50} | ${latency.p90} | ${latency.p99} | ${latency.max} | ${overhead.p50} | ${overhead.p99} | ${phase.throughputPerSecond} | ${w.statusPatchesPerRun} | ${w.eventsPerRun} | ${rc2.peakRssMiB} | ${wt2.peakRssMiB} | ${floor ? `${floor.phase.latencyMs.p50} / ${floor.phase.latencyMs.p99}` : "–"} | ${phase.cpu.foreign} |`;
  console.log(`\n${table(rows)}\n\n${markdown}\n`);
  console.log(JSON.stringify(result));
  if (flags.samples) writeFileSync(flags.samples, runSamplesCsv(phase.batch));
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`);
  const floorOk = !floor || floor.phase.completed === N;
  exitCode = phase.completed === N && floorOk && !result.aborted ? 0 : 1;
  if (result.aborted) log(`run stopped early: ${result.aborted}`);
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 1;
} finally {
  run.finish();
  await services.stopAll();
  if (flags.logs) {
    mkdirSync(flags.logs, { recursive: true });
    for (const svc of services.running) {
      try {
        copyFileSync(svc.logFile, join(flags.logs, basename(svc.logFile)));
      } catch (err) {
        log(`could not keep ${svc.logFile}: ${errorMessage(err)}`);
      }
    }
  }
  await cp?.stop();
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
