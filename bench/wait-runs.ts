// Benchmark: TEP-0002 Wait runs end to end. A private control plane with
// Quarry's API (its run CRDs included), the real run-controller and wait-task
// (examples/wait-task, on libs/customtask-sdk) processes under their shipped
// RBAC, and --concurrency clients creating --runs CustomRuns (or Runs) of
// `wait.testing.tekton.dev/v1beta1` Wait with `duration` --duration. Latency
// = Succeeded=True seen on a watch − just before the create was sent; the
// overhead is the time a run does not spend waiting (create → Started seen,
// plus startTime + duration → True seen). Compared with the lifecycle API
// floor, measured first on the same control plane (--no-floor skips it).
import { copyFileSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import type { AnyRun, RunFlavour } from "@quarry/api";
import { resourceOf, runObject, WAIT_REF } from "@quarry/harness/runs";
import { newScenario } from "@quarry/harness/scenario";
import { errorMessage, parseDuration, RestKubeClient } from "@quarry/kube";
import { loadFlags, runBenchmark } from "./lib/benchmark.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import {
  aroundBatch,
  checkWarmup,
  diff,
  type MeasuredWindow,
  outcome,
  spanOf,
  timeline,
} from "./lib/phase.ts";
import { cpuRow, type FloorRun, floorJson, serviceRow } from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { controllerConcurrency, controlPlaneVersions, machineInfo, machineRows } from "./lib/report.ts";
import { connections, startWatch } from "./lib/requests.ts";
import { log } from "./lib/run.ts";
import {
  type RunBatch,
  type RunSample,
  RunTracker,
  runRunBatch,
  runSamplesCsv,
  watchRuns,
} from "./lib/runs.ts";
import { logWarnings, MiB, type ServiceFigures } from "./lib/service-stats.ts";
import { calls, ms, type Row, round, table } from "./lib/stats.ts";

/** A controller's work queue over the measured window, from its service's /metrics. */
function queueView(p: MeasuredWindow<RunBatch>, service: string, controller: string, n: number) {
  const w = p.services[service];
  const d = (metric: string) =>
    promSum(w?.metricsAfter ?? "", metric, { controller }) -
    promSum(w?.metricsBefore ?? "", metric, { controller });
  const reconciles = d("quarry_workqueue_work_duration_seconds_count");
  const waits = d("quarry_workqueue_queue_duration_seconds_count");
  return {
    reconciles,
    reconcilesPerRun: round(reconciles / n, 2),
    adds: d("quarry_workqueue_adds_total"),
    retries: d("quarry_workqueue_retries_total"),
    meanWorkMs: reconciles
      ? round((d("quarry_workqueue_work_duration_seconds_sum") / reconciles) * 1000, 2)
      : 0,
    meanQueueWaitMs: waits ? round((d("quarry_workqueue_queue_duration_seconds_sum") / waits) * 1000, 1) : 0,
  };
}

/** Successful writes (not reads or watches) in a resource's "VERB[/sub] code" counts. */
const writes = (c: Record<string, number> | undefined): number =>
  Object.entries(c ?? {})
    .filter(([k]) => /^(POST|PUT|PATCH|DELETE|APPLY)\b/.test(k) && / 2\d\d$/.test(k))
    .reduce((a, [, v]) => a + v, 0);

const { requests: _requests, ...load } = loadFlags(1000);

/** A phase's result: the floor's, or the runs'. */
interface Step {
  floor?: FloorRun;
  runs?: {
    window: MeasuredWindow<RunBatch>;
    controllers: Record<string, ServiceFigures>;
    warnings: Record<string, Record<string, number>>;
    client: { retries: number; watchRestarts: number };
  };
}

await runBenchmark({
  name: "wait-runs",
  about: "TEP-0002 Wait runs through the run-controller and the Wait controller, after the lifecycle floor.",
  deadline: 600,
  flags: {
    runs: { type: "int", default: 1000, min: 1, help: "measured runs" },
    duration: { type: "string", default: "1s", arg: "D", help: "each Wait's duration param" },
    ...load,
    flavour: {
      type: "string",
      default: "CustomRun",
      arg: "F",
      choices: ["CustomRun", "Run"],
      help: "CustomRun (tekton.dev/v1beta1) or Run (tekton.dev/v1alpha1)",
    },
    "closed-loop": { type: "boolean", help: "each client waits for its run to succeed before the next" },
    floor: {
      type: "boolean",
      default: true,
      help: "skip the same-run floor (compare with docs/performance.md only)",
    },
    settle: {
      type: "number",
      default: 3,
      min: 0,
      arg: "S",
      help: "seconds to keep watching after the last run is done, for late writes",
    },
    "node-options": {
      type: "string",
      help: "NODE_OPTIONS of run-controller and wait-task (as --node-options=S)",
    },
    logs: { type: "string", arg: "DIR", help: "copy the services' log files to DIR before teardown" },
  },
  notes: "The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).",

  async setup(ctx) {
    const durationMs = parseDuration(ctx.flags.duration);
    const plane = await ctx.controlPlane();
    const { logs } = ctx.flags;
    if (logs) {
      // before the services stop: their log files go with the control plane's directory
      ctx.defer(() => {
        mkdirSync(logs, { recursive: true });
        for (const svc of ctx.services.running) {
          try {
            copyFileSync(svc.logFile, join(logs, basename(svc.logFile)));
          } catch (err) {
            log(`could not keep ${svc.logFile}: ${errorMessage(err)}`);
          }
        }
      });
    }
    return { versions: controlPlaneVersions(), plane, durationMs, flavour: ctx.flags.flavour as RunFlavour };
  },

  phases(ctx, { plane, flavour }) {
    const f = ctx.flags;
    const floor = {
      name: "floor",
      run: async (): Promise<Step> => ({
        floor: await runSameRunFloor({
          plane,
          services: ctx.services,
          concurrency: f.concurrency,
          warmup: f.warmup,
          requests: f.runs,
          signal: ctx.signal,
          clientStats: { retries: 0 },
          closedLoop: f["closed-loop"],
        }),
      }),
    };
    const runs = {
      name: "runs",
      run: async (): Promise<Step> => {
        const scn = await newScenario("bench-wait", { cp: plane.info });
        const env: Record<string, string> = f["node-options"] ? { NODE_OPTIONS: f["node-options"] } : {};
        const rc = await ctx.services.start(scn, "run-controller", env);
        const wt = await ctx.services.start(scn, "wait-task", env);
        const tracker = new RunTracker();
        const watchStats = { restarts: 0 };
        const clientStats = { retries: 0 };
        const watch = startWatch(ctx.signal, (stop, listed) =>
          watchRuns(
            RestKubeClient.fromEnvironment(plane.cp.adminKubeconfig),
            flavour,
            scn.namespace,
            tracker,
            stop,
            watchStats,
            listed,
          ),
        );
        try {
          await watch.ready;
          const clients = connections(plane.cp.adminKubeconfig, f.concurrency);
          const make = (name: string): AnyRun =>
            runObject(flavour, scn.namespace, {
              name,
              ref: WAIT_REF,
              params: [{ name: "duration", value: f.duration }],
            });
          const batchOf = (prefix: string, n: number) =>
            runRunBatch({
              clients,
              prefix,
              n,
              tracker,
              signal: ctx.signal,
              make,
              stats: clientStats,
              closedLoop: f["closed-loop"],
            });
          if (f.warmup > 0) {
            log(`runs: warm-up, ${f.warmup} runs`);
            checkWarmup("runs", (await batchOf("warm", f.warmup)).samples, f.warmup, ctx.signal);
          }
          const window = await aroundBatch(
            {
              cp: plane.cp,
              services: [rc.svc, wt.svc],
              pids: plane.pids,
              resources: [resourceOf(flavour).plural, "resolutionrequests", "events"],
              // late writes (to finished runs) and Events land here; the watch keeps counting them
              settleAfterMs: Math.max(300, f.settle * 1000),
            },
            () => {
              log(`runs: measuring, ${f.runs} ${flavour}s of Wait ${f.duration}, ${f.concurrency} clients`);
              return batchOf("run", f.runs);
            },
          );
          // RSS once the burst is over (after the settle time), beside the peak
          const rssAtEndMiB = {
            "run-controller": MiB(vmKiB(rc.svc.pid, "VmRSS")),
            "wait-task": MiB(vmKiB(wt.svc.pid, "VmRSS")),
          };
          const controllers: Record<string, ServiceFigures> = {
            "run-controller": { ...(await rc.stats.final()), rssAtEndMiB: rssAtEndMiB["run-controller"] },
            "wait-task": { ...(await wt.stats.final()), rssAtEndMiB: rssAtEndMiB["wait-task"] },
          };
          const warnings = { "run-controller": logWarnings(rc.svc), "wait-task": logWarnings(wt.svc) };
          const client = { retries: clientStats.retries, watchRestarts: watchStats.restarts };
          return { runs: { window, controllers, warnings, client } };
        } finally {
          await watch.stop();
        }
      },
    };
    return f.floor ? [floor, runs] : [runs];
  },

  result(ctx, { versions, durationMs, flavour }, phases) {
    const f = ctx.flags;
    const n = f.runs;
    const floor = phases.find((p) => p.floor)?.floor;
    const m = phases.find((p) => p.runs)?.runs;
    if (!m) throw new Error("the runs did not run");
    const p = m.window;
    const batch = p.batch;
    const o = outcome(batch, n);
    const done = batch.samples.filter((s) => s.done !== undefined);
    const span = (value: (s: RunSample) => number | undefined, digits = 1) => spanOf(done, value, digits);
    const lateness = (s: RunSample) =>
      s.startTimeMs === undefined ? undefined : s.doneWall! - (s.startTimeMs + durationMs);
    const overhead = span((s) => {
      const late = lateness(s);
      return late === undefined || s.startedWall === undefined ? undefined : s.startedWall - s.t0Wall + late;
    });
    const lastCreate = Math.max(batch.start, ...batch.samples.flatMap((s) => (s.created ? [s.created] : [])));
    const plural = resourceOf(flavour).plural;
    const runCalls = p.apiCalls[plural] ?? {};
    const modifiedHistogram: Record<string, number> = {};
    for (const s of done) modifiedHistogram[s.modified] = (modifiedHistogram[s.modified] ?? 0) + 1;
    const eventWrites = writes(p.apiCalls.events);
    const perRun = (x: number) => round(x / n, 2);
    const cpuTotal = Object.values(p.cpu.processes).reduce((a, b) => a + b, 0) + p.cpu.benchDriver;
    const documented = documentedFloor();
    return {
      benchmark: "wait-runs",
      date: new Date().toISOString(),
      params: {
        runs: n,
        duration: f.duration,
        flavour,
        concurrency: f.concurrency,
        warmup: f.warmup,
        closedLoop: f["closed-loop"],
        withFloor: f.floor,
        settleSeconds: f.settle,
        logLevel: f["log-level"],
        nodeOptions: f["node-options"],
        runFlavoursServed: process.env.QUARRY_RUN_FLAVOURS ?? "Run,CustomRun (default)",
        controllerConcurrency: controllerConcurrency(),
      },
      runs: {
        ...o,
        latencyMs: span((s) => s.done! - s.t0),
        breakdown: {
          createMs: span((s) => diff(s.t0, s.created)),
          latencyMinusDurationMs: span((s) => s.done! - s.t0 - durationMs),
          startDelayMs: span((s) => diff(s.t0, s.started)),
          startedToRunningSeenMs: span((s) => diff(s.started, s.running)),
          latenessMs: span(lateness),
          overheadMs: overhead,
          // what the Wait actually waited: Started seen → True seen (startTime has second resolution)
          startedToSucceededSeenMs: span((s) => diff(s.started, s.done)),
          startTimeTruncatedMs: span((s) => diff(s.startTimeMs, s.startedWall)),
        },
        notSeenStarted: done.filter((s) => s.started === undefined).length,
        notSeenRunning: done.filter((s) => s.running === undefined).length,
        createsPerSecond: round(batch.samples.length / Math.max(0.001, (lastCreate - batch.start) / 1000), 1),
        timeline: timeline(batch, {
          created: (s) => s.created,
          startedSeen: (s) => s.started,
          succeededSeen: (s) => s.done,
        }),
        writes: {
          statusPatchesPerRun: perRun(runCalls["PATCH/status 200"] ?? 0),
          conflictsPerRun: perRun(runCalls["PATCH/status 409"] ?? 0),
          modifiedEventsPerRun: span((s) => s.modified, 2),
          modifiedEventsHistogram: modifiedHistogram,
          writesAfterSucceeded: done.reduce((a, s) => a + s.modifiedAfterDone, 0),
          requestCreates: Object.entries(p.apiCalls.resolutionrequests ?? {})
            .filter(([k]) => k.startsWith("POST"))
            .reduce((a, [, v]) => a + v, 0),
          eventsPerRun: perRun(eventWrites),
          // every successful write on the three resources, less the bench's own creates
          controllerWritesPerRun: perRun(
            writes(runCalls) - n + writes(p.apiCalls.resolutionrequests) + eventWrites,
          ),
        },
        queues: {
          "run-controller": queueView(p, "run-controller", `run-${flavour.toLowerCase()}`, n),
          "wait-task": queueView(p, "wait-task", `wait-task-${flavour.toLowerCase()}`, n),
        },
        enforcements: p.services["run-controller"]?.logLines["enforced the custom-task contract"] ?? 0,
        controllers: Object.fromEntries(
          Object.entries(m.controllers).map(([name, c]) => [
            name,
            { ...c, cpuSecondsMeasured: p.cpu.processes[name], logLines: p.services[name]?.logLines ?? {} },
          ]),
        ),
        warnings: m.warnings,
        cpuSecondsMeasured: p.cpu,
        cpuMsPerRun: round((cpuTotal * 1000) / Math.max(1, o.completed), 2),
        apiCalls: p.apiCalls,
        client: m.client,
      },
      floor: floorJson(floor),
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
      setupSeconds: round((batch.start - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx) {
    const f = ctx.flags;
    const n = f.runs;
    const x = r.runs;
    const b = x.breakdown;
    const w = x.writes;
    const tl = x.timeline;
    const cpu = x.cpuSecondsMeasured;
    const rows: Row[] = [
      [
        `Wait runs (${r.params.flavour})`,
        `${n} runs of ${f.duration}, ${f.concurrency} clients${f["closed-loop"] ? " (closed loop)" : ""} (warm-up ${f.warmup})`,
      ],
      ["  completed", `${x.completed}/${n} (failed ${x.failed}, incomplete ${x.incomplete})`],
      ...x.failures.map((e): Row => ["  failure", e]),
      ["  latency ms (create → True)", ms(x.latencyMs)],
      ["    − duration", ms(b.latencyMinusDurationMs)],
      ["    create", ms(b.createMs)],
      ["    create → Started seen", `${ms(b.startDelayMs)}; never seen ${x.notSeenStarted}`],
      ["    Started → Running seen", `${ms(b.startedToRunningSeenMs)}; never seen ${x.notSeenRunning}`],
      ["    Started → True seen", ms(b.startedToSucceededSeenMs)],
      ["    due → True seen", `${ms(b.latenessMs)}  (due = status.startTime + duration)`],
      ["    startTime truncation", `${ms(b.startTimeTruncatedMs)}  (Started seen − status.startTime)`],
      ["  overhead ms", `${ms(b.overheadMs)}  (create → Started seen + due → True seen)`],
      ["  wall time", `${x.wallSeconds} s (creates at ${x.createsPerSecond}/s)`],
      ["  throughput", `${x.throughputPerSecond} runs/s`],
      [`  per ${tl.windowMs} ms: created`, tl.created.join(" ")],
      ["                 Started seen", tl.startedSeen.join(" ")],
      ["                 True seen", tl.succeededSeen.join(" ")],
      [
        "  writes per run",
        `status PATCHes ${w.statusPatchesPerRun} (409s ${w.conflictsPerRun}), Events ${w.eventsPerRun}, ResolutionRequests created ${w.requestCreates}; all controller writes ${w.controllerWritesPerRun}`,
      ],
      [
        "  MODIFIED seen per run",
        `${ms(w.modifiedEventsPerRun)}; by count ${JSON.stringify(w.modifiedEventsHistogram)}; after True: ${w.writesAfterSucceeded} (settle ${f.settle} s)`,
      ],
      ...Object.entries(x.queues).map(
        ([name, q]): Row => [
          `  ${name} queue`,
          `${q.reconciles} reconciles (${q.reconcilesPerRun}/run), ${q.adds} adds, ${q.retries} retries; mean reconcile ${q.meanWorkMs} ms, mean queue wait ${q.meanQueueWaitMs} ms`,
        ],
      ),
      ["  enforcements", String(x.enforcements)],
      ...Object.entries(x.controllers).map(([name, c]) => serviceRow(`  ${name}`, c, c.cpuSecondsMeasured)),
      cpuRow({ cpu, wallSeconds: x.wallSeconds }),
      ["  CPU per run", `${x.cpuMsPerRun} ms (all processes of the run)`],
      ...Object.entries(x.apiCalls).map(([res, c]): Row => [`  API calls: ${res}`, calls(c)]),
      [
        "  warnings",
        Object.entries(x.warnings)
          .map(([k, v]) => `${k}: ${calls(v)}`)
          .join("; "),
      ],
      ["  client", `${x.client.retries} retries, ${x.client.watchRestarts} watch restarts`],
    ];
    const fl = r.floor;
    if (fl) {
      rows.push(
        ["", ""],
        ["floor (same run)", `${n} requests, ${f.concurrency} clients (warm-up ${f.warmup})`],
        ["  latency ms", ms(fl.latencyMs)],
        ["  wall time / throughput", `${fl.wallSeconds} s, ${fl.throughputPerSecond} requests/s`],
        serviceRow("  lifecycle-controller", fl.controller),
        cpuRow({ cpu: fl.cpuSecondsMeasured, wallSeconds: fl.wallSeconds }),
        ["  API calls", calls(fl.apiCalls.resolutionrequests ?? {})],
      );
    }
    rows.push(["", ""]);
    const same = r.overFloor.sameRun;
    if (same)
      rows.push([
        "overhead over the floor",
        `+${same.overheadP50Ms} ms p50, +${same.overheadP99Ms} ms p99 (overhead ×${same.overheadRatioP50} of the floor's p50)`,
      ]);
    const doc = r.overFloor.documented;
    rows.push(
      "error" in doc
        ? ["over the documented floor", `unavailable: ${doc.error}`]
        : [
            "over the documented floor",
            `+${doc.overheadP50Ms} ms p50, +${doc.overheadP99Ms} ms p99 over p50 ${doc.floor.p50} / p99 ${doc.floor.p99} ms (${doc.floor.requests} requests, another run)`,
          ],
      ...machineRows(r.machine),
    );
    const l = x.latencyMs;
    const o = b.overheadMs;
    const peak = (s: string) => x.controllers[s]?.peakRssMiB;
    const markdown = `| ${n} | ${l.p50} | ${l.p90} | ${l.p99} | ${l.max} | ${o.p50} | ${o.p99} | ${x.throughputPerSecond} | ${w.statusPatchesPerRun} | ${w.eventsPerRun} | ${peak("run-controller")} | ${peak("wait-task")} | ${fl ? `${fl.latencyMs.p50} / ${fl.latencyMs.p99}` : "–"} | ${cpu.foreign} |`;
    return `${table(rows)}\n\n${markdown}`;
  },

  ok: (r, ctx) => r.runs.completed === ctx.flags.runs && (!r.floor || r.floor.completed === ctx.flags.runs),
  samples: (_s, phases) => {
    const m = phases.find((p) => p.runs)?.runs;
    return m ? runSamplesCsv(m.window.batch) : "";
  },
});
