// Benchmark: TEP-0002 Wait runs through the real run-controller and wait-task, after the lifecycle
// floor on the same control plane. The overhead is the time a run does not spend waiting: create →
// Started seen, plus status.startTime + duration → True seen (docs/performance.md, "Runs: Wait").
import { copyFileSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import type { RunFlavour } from "@quarry/api";
import { resourceOf, runObject, WAIT_REF } from "@quarry/harness/runs";
import { newScenario } from "@quarry/harness/scenario";
import { errorMessage, parseDuration } from "@quarry/kube";
import { loadFlags, onePhase, runBenchmark } from "./lib/benchmark.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import {
  aroundBatch,
  checkWarmup,
  diff,
  outcome,
  type ServiceWindow,
  spanOf,
  timeline,
} from "./lib/phase.ts";
import { floorJson } from "./lib/phase-report.ts";
import { promSum } from "./lib/prom.ts";
import { controllerConcurrency, controlPlaneVersions, machineInfo, machineRows } from "./lib/report.ts";
import { connections, runBatch } from "./lib/requests.ts";
import { log } from "./lib/run.ts";
import { type RunSample, runClient, runSamplesCsv, trackRuns } from "./lib/runs.ts";
import { logWarnings, type ServiceFigures } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";
import { flagParams, valueReport } from "./lib/value-rows.ts";

/** A controller's work queue over the measured window, from its service's /metrics. */
function queueView(w: ServiceWindow | undefined, controller: string, n: number) {
  const d = (m: string) =>
    promSum(w?.metricsAfter ?? "", `quarry_workqueue_${m}`, { controller }) -
    promSum(w?.metricsBefore ?? "", `quarry_workqueue_${m}`, { controller });
  const meanMs = (m: string, digits: number) => {
    const count = d(`${m}_count`);
    return count ? round((d(`${m}_sum`) / count) * 1000, digits) : 0;
  };
  const reconciles = d("work_duration_seconds_count");
  return {
    reconciles,
    reconcilesPerRun: round(reconciles / n, 2),
    adds: d("adds_total"),
    retries: d("retries_total"),
    meanWorkMs: meanMs("work_duration_seconds", 2),
    meanQueueWaitMs: meanMs("queue_duration_seconds", 1),
  };
}

/** The sum of a resource's "VERB[/sub] code" counts whose key passes `keep`. */
const sum = (c: Record<string, number> | undefined, keep: (k: string) => boolean): number =>
  Object.entries(c ?? {}).reduce((a, [k, v]) => (keep(k) ? a + v : a), 0);
/** Successful writes, not reads or watches. */
const writes = (c: Record<string, number> | undefined) =>
  sum(c, (k) => /^(POST|PUT|PATCH|DELETE|APPLY)\b/.test(k) && / 2\d\d$/.test(k));

/** How late a run was seen True after it was due (status.startTime + the Wait's duration). */
const lateness = (s: RunSample, durationMs: number) =>
  s.startTimeMs === undefined ? undefined : s.doneWall! - (s.startTimeMs + durationMs);

/** The split of a run's latency, by its JSON key. */
const BREAKDOWN: Record<string, (s: RunSample, durationMs: number) => number | undefined> = {
  latencyMinusDurationMs: (s, d) => s.done! - s.t0 - d,
  createMs: (s) => diff(s.t0, s.created),
  startDelayMs: (s) => diff(s.t0, s.started),
  startedToRunningSeenMs: (s) => diff(s.started, s.running),
  // what the Wait actually waited (startTime has whole seconds)
  startedToSucceededSeenMs: (s) => diff(s.started, s.done),
  latenessMs: lateness,
  startTimeTruncatedMs: (s) => diff(s.startTimeMs, s.startedWall),
  // create → Started seen, plus due → True seen
  overheadMs: (s, d) => {
    const late = lateness(s, d);
    return late === undefined || s.startedWall === undefined ? undefined : s.startedWall - s.t0Wall + late;
  },
};

const { requests: _requests, ...load } = loadFlags(1000);

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
    floor: { type: "boolean", default: true, help: "skip the same-run floor (compare with the docs only)" },
    settle: {
      type: "number",
      default: 3,
      min: 0,
      arg: "S",
      help: "seconds to watch after the last run, for late writes",
    },
    "node-options": { type: "string", help: "NODE_OPTIONS of both services (as --node-options=S)" },
    logs: { type: "string", arg: "DIR", help: "copy the services' log files to DIR before teardown" },
  },
  notes: "The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).",

  async setup(ctx) {
    const plane = await ctx.controlPlane();
    const { logs } = ctx.flags;
    // registered after the control plane's teardown, so it runs before it: the logs live in its directory
    if (logs)
      ctx.defer(() => {
        mkdirSync(logs, { recursive: true });
        for (const { logFile } of ctx.services.running) {
          try {
            copyFileSync(logFile, join(logs, basename(logFile)));
          } catch (err) {
            log(`could not keep ${logFile}: ${errorMessage(err)}`);
          }
        }
      });
    const durationMs = parseDuration(ctx.flags.duration);
    return { versions: controlPlaneVersions(), plane, durationMs, flavour: ctx.flags.flavour as RunFlavour };
  },

  // the floor first, in its own namespace (its lifecycle-controller stopped after it), then the runs
  phases: (ctx, { plane, flavour }) =>
    onePhase("wait", async () => {
      const f = ctx.flags;
      const { signal } = ctx;
      const { concurrency, warmup } = f;
      const closedLoop = f["closed-loop"];
      const services = ctx.services;
      const floor = f.floor
        ? await runSameRunFloor({
            plane,
            services,
            concurrency,
            warmup,
            requests: f.runs,
            signal,
            closedLoop,
            clientStats: { retries: 0 },
          })
        : undefined;
      const scn = await newScenario("bench-wait", { cp: plane.info });
      const env: Record<string, string> = f["node-options"] ? { NODE_OPTIONS: f["node-options"] } : {};
      const started = {
        "run-controller": await services.start(scn, "run-controller", env),
        "wait-task": await services.start(scn, "wait-task", env),
      };
      const watch = trackRuns(signal, plane.cp.adminKubeconfig, flavour, scn.namespace);
      const stats = { retries: 0 };
      const params = [{ name: "duration", value: f.duration }];
      const client = runClient(
        (name) => runObject(flavour, scn.namespace, { name, ref: WAIT_REF, params }),
        stats,
        signal,
      );
      try {
        await watch.ready;
        const clients = connections(plane.cp.adminKubeconfig, concurrency);
        const batchOf = (prefix: string, n: number) =>
          runBatch({ ...client, clients, prefix, n, tracker: watch.tracker, signal, closedLoop });
        if (warmup > 0) {
          log(`runs: warm-up, ${warmup} runs`);
          checkWarmup("runs", (await batchOf("warm", warmup)).samples, warmup, signal);
        }
        const window = await aroundBatch(
          {
            cp: plane.cp,
            services: Object.values(started).map((s) => s.svc),
            pids: plane.pids,
            resources: [resourceOf(flavour).plural, "resolutionrequests", "events"],
            // late writes (to finished runs) and Events land here; the watch keeps counting them
            settleAfterMs: Math.max(300, f.settle * 1000),
          },
          () => {
            log(`runs: measuring, ${f.runs} ${flavour}s of Wait ${f.duration}, ${concurrency} clients`);
            return batchOf("run", f.runs);
          },
        );
        const controllers: Record<
          string,
          ServiceFigures & { cpuSecondsMeasured?: number; logLines: object }
        > = {};
        const warnings: Record<string, Record<string, number>> = {};
        for (const [name, s] of Object.entries(started)) {
          const measured = {
            cpuSecondsMeasured: window.cpu.processes[name],
            logLines: window.services[name]?.logLines ?? {},
          };
          controllers[name] = { ...(await s.stats.final()), ...measured };
          warnings[name] = logWarnings(s.svc);
        }
        return {
          floor,
          ...window,
          controllers,
          warnings,
          client: { ...stats, watchRestarts: watch.stats.restarts },
        };
      } finally {
        await watch.stop();
      }
    }),

  result(ctx, { versions, durationMs, flavour }, [m]) {
    if (!m) throw new Error("the runs did not run");
    const f = ctx.flags;
    const n = f.runs;
    const { floor } = m;
    const { batch, apiCalls: api, cpu } = m;
    const o = outcome(batch, n);
    const done = batch.samples.filter((s) => s.done !== undefined);
    const breakdown = Object.fromEntries(
      Object.entries(BREAKDOWN).map(([k, span]) => [k, spanOf(done, (s) => span(s, durationMs))]),
    );
    const overhead = breakdown.overheadMs!;
    const lastCreate = Math.max(batch.start, ...batch.samples.flatMap((s) => (s.created ? [s.created] : [])));
    const runCalls = api[resourceOf(flavour).plural] ?? {};
    const modifiedHistogram: Record<string, number> = {};
    for (const s of done) modifiedHistogram[s.modified] = (modifiedHistogram[s.modified] ?? 0) + 1;
    const perRun = (x: number) => round(x / n, 2);
    const cpuTotal = Object.values(cpu.processes).reduce((a, b) => a + b, 0) + cpu.benchDriver;
    const documented = documentedFloor();
    const overDoc = (p: "p50" | "p99") =>
      documented instanceof Error ? 0 : round(overhead[p] - documented[p], 1);
    return {
      benchmark: "wait-runs",
      date: new Date().toISOString(),
      params: {
        ...flagParams(f, { floor: "withFloor", settle: "settleSeconds" }),
        runFlavoursServed: process.env.QUARRY_RUN_FLAVOURS ?? "Run,CustomRun (default)",
        controllerConcurrency: controllerConcurrency(),
      },
      runs: {
        ...o,
        latencyMs: spanOf(done, (s) => s.done! - s.t0),
        breakdown,
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
          modifiedEventsPerRun: spanOf(done, (s) => s.modified, 2),
          modifiedEventsHistogram: modifiedHistogram,
          writesAfterSucceeded: done.reduce((a, s) => a + s.modifiedAfterDone, 0),
          requestCreates: sum(api.resolutionrequests, (k) => k.startsWith("POST")),
          eventsPerRun: perRun(writes(api.events)),
          // every successful write on the three resources, less the bench's own creates
          controllerWritesPerRun: perRun(
            writes(runCalls) - n + writes(api.resolutionrequests) + writes(api.events),
          ),
        },
        queues: {
          "run-controller": queueView(m.services["run-controller"], `run-${flavour.toLowerCase()}`, n),
          "wait-task": queueView(m.services["wait-task"], `wait-task-${flavour.toLowerCase()}`, n),
        },
        enforcements: m.services["run-controller"]?.logLines["enforced the custom-task contract"] ?? 0,
        controllers: m.controllers,
        warnings: m.warnings,
        cpuSecondsMeasured: cpu,
        cpuMsPerRun: round((cpuTotal * 1000) / Math.max(1, o.completed), 2),
        apiCalls: api,
        client: m.client,
      },
      floor: floorJson(floor),
      overFloor: {
        // the Wait's own overhead (start delay + lateness) against the floor's whole latency
        sameRun: floor && {
          overheadP50Ms: round(overhead.p50 - floor.phase.latencyMs.p50, 1),
          overheadP99Ms: round(overhead.p99 - floor.phase.latencyMs.p99, 1),
          overheadRatioP50: round(overhead.p50 / floor.phase.latencyMs.p50, 2),
        },
        documented:
          documented instanceof Error
            ? { error: documented.message }
            : { floor: documented, overheadP50Ms: overDoc("p50"), overheadP99Ms: overDoc("p99") },
      },
      machine: machineInfo(versions),
      setupSeconds: round((batch.start - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx) {
    const f = ctx.flags;
    const { runs: x, floor: fl } = r;
    const [l, o, w] = [x.latencyMs, x.breakdown.overheadMs!, x.writes];
    const peak = (s: string) => x.controllers[s]?.peakRssMiB;
    const loop = f["closed-loop"] ? " (closed loop)" : "";
    return valueReport(
      [
        [
          `Wait runs (${f.flavour})`,
          `${f.runs} of ${f.duration}, ${f.concurrency} clients${loop} (warm-up ${f.warmup}); due = status.startTime + duration`,
        ],
        ["runs", x],
        ["floor (same run)", fl ?? "skipped"],
        ["over the floor ms", r.overFloor],
        ...machineRows(r.machine),
      ],
      "runs | p50 ms | p90 ms | p99 ms | max ms | overhead p50 / p99 ms | runs/s | status PATCHes / run | 409s / run | Events / run | CPU / run ms | peak MiB run-controller / wait-task | floor p50 / p99 ms | foreign CPU s",
      `${f.runs} | ${l.p50} | ${l.p90} | ${l.p99} | ${l.max} | ${o.p50} / ${o.p99} | ${x.throughputPerSecond} | ${w.statusPatchesPerRun} | ${w.conflictsPerRun} | ${w.eventsPerRun} | ${x.cpuMsPerRun} | ${peak("run-controller")} / ${peak("wait-task")} | ${fl ? `${fl.latencyMs.p50} / ${fl.latencyMs.p99}` : "–"} | ${x.cpuSecondsMeasured.foreign}`,
    );
  },

  ok: (r, ctx) => r.runs.completed === ctx.flags.runs && (!r.floor || r.floor.completed === ctx.flags.runs),
  samples: (_s, [m]) => (m ? runSamplesCsv(m.batch) : ""),
});
