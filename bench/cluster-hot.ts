// Benchmark: the cluster resolver's hot path. A private control plane with
// Quarry's API and the Tekton CRD stand-ins, a namespace holding --tasks Tasks
// (applied before the resolver starts, so its informer serves them all), and
// the real lifecycle-controller and cluster-resolver processes under their
// shipped RBAC. --concurrency clients create --requests ResolutionRequests of
// type `cluster` (params kind=task, name=<one of the Tasks>); nothing else
// touches them. Latency = Succeeded=True seen on a watch − just before the
// create was sent. Compared with the lifecycle floor: the documented figures
// (docs/performance.md, a cross-run comparison), and with --with-floor the
// floor measured first on the same control plane (a same-run comparison).
//
//   node bench/cluster-hot.ts [--requests 1000] [--concurrency 16] [--with-floor] [--json out.json]
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import type { ControlPlane } from "@quarry/devcluster/controlplane";
import { errorMessage, type KubeClient, settingsFromEnv } from "@quarry/kube";
import { newScenario } from "../e2e/harness/scenario.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { loadOptions, loadSizes } from "./lib/flags.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import { calls, controlPlaneVersions, machineInfo, ms, versus } from "./lib/report.ts";
import { createWithRetry, SAMPLES_CSV_HEADER, type Sample, samplesCsv } from "./lib/requests.ts";
import { resolverView } from "./lib/resolver-view.ts";
import { BoundedRun, intFlag, log } from "./lib/run.ts";
import { BenchServices, type ServiceFigures } from "./lib/service-stats.ts";
import { round, table } from "./lib/stats.ts";
import { applyClusterTasks, clusterRequest } from "./lib/workloads.ts";

const USAGE = `usage: node bench/cluster-hot.ts [options]
  --requests N      measured requests (default 1000)
  --concurrency N   in-flight clients creating requests (default 16)
  --tasks N         Tasks in the namespace; request i asks for Task i mod N (default 50)
  --warmup N        requests sent and discarded before measuring (default 20; 0 disables)
  --closed-loop     each client waits until its request is Succeeded before creating the next
                    (default: open loop, a client creates its next request as soon as the
                    create returns, so the burst queues in the controllers)
  --with-floor      first measure the lifecycle floor (same requests, clients, control plane)
                    in its own namespace, for a same-run comparison
  --deadline S      the whole run stops after S seconds, torn down either way (default 300)
  --log-level L     the services' LOG_LEVEL (default info, the services' own default)
  --json FILE       also write the JSON result to FILE
  --samples FILE    write every measured request's timeline (ms since the phase's first create) as CSV
The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).`;

const { values: flags } = parseArgs({
  options: {
    ...loadOptions({ requests: "1000", deadline: "300" }),
    tasks: { type: "string", default: "50" },
    "with-floor": { type: "boolean", default: false },
    "closed-loop": { type: "boolean", default: false },
  },
});
const sizes = loadSizes(flags, USAGE);
const N = sizes.requests;
const CONCURRENCY = sizes.concurrency;
const WARMUP = sizes.warmup;
const DEADLINE_S = sizes.deadlineSeconds;
const TASKS = intFlag("tasks", flags.tasks, 1, USAGE);
const WITH_FLOOR = flags["with-floor"];
const CLOSED_LOOP = flags["closed-loop"];
const LOG_LEVEL = flags["log-level"];

/** The figures of a phase that go to the JSON result (no per-request samples, no /metrics text). */
function phaseJson(p: PhaseResult, controllers: Record<string, ServiceFigures>) {
  return {
    completed: p.completed,
    failed: p.failed,
    incomplete: p.incomplete,
    failures: p.failures,
    latencyMs: p.latencyMs,
    wallSeconds: p.wallSeconds,
    throughputPerSecond: p.throughputPerSecond,
    breakdown: p.breakdown,
    notSeenInProgress: p.notSeenInProgress,
    timeline: p.timeline,
    controllers: Object.fromEntries(
      Object.entries(controllers).map(([name, f]) => [
        name,
        {
          ...f,
          cpuSecondsMeasured: p.cpu.processes[name],
          logLines: p.services[name]?.logLines ?? {},
        },
      ]),
    ),
    cpuSecondsMeasured: p.cpu,
    cpuMsPerRequest: round(
      ((Object.values(p.cpu.processes).reduce((a, b) => a + b, 0) + p.cpu.benchDriver) * 1000) /
        Math.max(1, p.completed),
      2,
    ),
    apiCalls: p.apiCalls,
    client: p.client,
  };
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
    admin,
  } = await startBenchControlPlane(
    run,
    (started) => {
      cp = started;
    },
    { tekton: true },
  );
  const clientStats = { retries: 0 };

  // ---- optional: the floor, first, in its own namespace with its own lifecycle-controller ----
  let floor: { phase: PhaseResult; controller: ServiceFigures } | undefined;
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
      clientStats,
      closedLoop: CLOSED_LOOP,
    });
  }

  // ---- the cluster resolver ----
  const scn = await newScenario("bench-cluster", { cp: info });
  await applyClusterTasks(admin, scn.namespace, TASKS);
  const lc = await services.start(scn, "lifecycle-controller");
  const resolver = await services.start(scn, "cluster-resolver");
  const clusterSend = async (client: KubeClient, name: string, i: number, s: Sample) => {
    await createWithRetry(client, clusterRequest(scn.namespace, name, i, TASKS), clientStats, run.signal);
    s.created = performance.now();
  };
  const phase = await runPhase({
    name: "cluster",
    cp: plane,
    namespace: scn.namespace,
    services: [lc.svc, resolver.svc],
    pids: cpPids,
    concurrency: CONCURRENCY,
    warmup: WARMUP,
    requests: N,
    signal: run.signal,
    send: clusterSend,
    closedLoop: CLOSED_LOOP,
    resources: ["resolutionrequests", "tasks", "events"],
  });
  const controllers = {
    "lifecycle-controller": await lc.stats.final(),
    "cluster-resolver": await resolver.stats.final(),
  };
  run.finish();

  // ---- report ----
  const lcWrites = phase.services["lifecycle-controller"]?.logLines["request condition updated"] ?? 0;
  const statusPatches = phase.apiCalls.resolutionrequests?.["PATCH/status 200"] ?? 0;
  const documented = documentedFloor();
  const lat = phase.latencyMs;
  const result = {
    benchmark: "cluster-hot",
    date: new Date().toISOString(),
    params: {
      requests: N,
      concurrency: CONCURRENCY,
      tasks: TASKS,
      warmup: WARMUP,
      withFloor: WITH_FLOOR,
      closedLoop: CLOSED_LOOP,
      logLevel: LOG_LEVEL,
      controllerConcurrency: process.env.QUARRY_CONCURRENCY ?? `${settingsFromEnv({}).concurrency} (default)`,
    },
    aborted: run.signal.aborted ? errorMessage(run.signal.reason) : undefined,
    cluster: {
      ...phaseJson(phase, controllers),
      resolver: {
        ...(resolverView(phase, "cluster-resolver", "cluster") ?? {
          outcomes: {},
          meanMs: Number.NaN,
          p50Ms: Number.NaN,
          p90Ms: Number.NaN,
          cache: {},
        }),
        // every status PATCH that succeeded minus the lifecycle controller's (it logs each one)
        statusWrites: statusPatches - lcWrites,
      },
      lifecycleStatusWrites: lcWrites,
    },
    floor: floor
      ? {
          ...phaseJson(floor.phase, { "lifecycle-controller": floor.controller }),
          lifecycleStatusWrites:
            floor.phase.services["lifecycle-controller"]?.logLines["request condition updated"] ?? 0,
        }
      : undefined,
    overFloor: {
      sameRun: floor
        ? {
            latencyMs: versus(lat, floor.phase.latencyMs),
            throughputRatio: round(phase.throughputPerSecond / floor.phase.throughputPerSecond, 2),
          }
        : undefined,
      // a cross-run comparison: another run, on another day, with the floor's default 500 requests
      documented:
        documented instanceof Error
          ? { error: documented.message }
          : {
              floor: documented,
              latencyMs: versus(lat, documented),
              throughputRatio: round(phase.throughputPerSecond / documented.throughputPerSecond, 2),
            },
    },
    machine: machineInfo(versions),
    setupSeconds: round((phase.batch.start - runStart) / 1000, 1),
  };

  const rv = result.cluster.resolver;
  const svcRows = (p: PhaseResult, figs: Record<string, ServiceFigures>): [string, string][] =>
    Object.entries(figs).map(([name, f]) => [
      `  ${name}`,
      `peak RSS (VmHWM) ${f.peakRssMiB} MiB (sampled max ${f.sampledMaxRssMiB}, at ready ${f.rssAtReadyMiB}); CPU ${f.cpuSeconds} s total (startup ${f.cpuSecondsStartup} s, measured ${p.cpu.processes[name]} s)`,
    ]);
  const timelineRows = (p: PhaseResult): [string, string][] => [
    [`  per ${p.timeline.windowMs} ms: created`, p.timeline.created.join(" ")],
    ["                 data seen", p.timeline.dataSeen.join(" ")],
    ["                 True seen", p.timeline.done.join(" ")],
  ];
  const cpuRow = (p: PhaseResult): [string, string] => [
    "  CPU in measured phase",
    `kube-apiserver ${p.cpu.processes["kube-apiserver"]} s, etcd ${p.cpu.processes.etcd} s, bench driver ${p.cpu.benchDriver} s; machine ${p.cpu.machine} s of ${round(p.wallSeconds * cpus().length, 2)} s available, foreign ${p.cpu.foreign} s`,
  ];
  const rows: [string, string][] = [
    [
      "cluster resolver (hot)",
      `${N} requests, ${CONCURRENCY} clients${CLOSED_LOOP ? " (closed loop)" : ""}, ${TASKS} Tasks (warm-up ${WARMUP})`,
    ],
    ["  completed", `${phase.completed}/${N} (failed ${phase.failed}, incomplete ${phase.incomplete})`],
    ...phase.failures.map((f): [string, string] => ["  failure", f]),
    ["  latency ms", ms(lat)],
    ["    create", ms(phase.breakdown.createMs!)],
    ["    created → data seen", ms(phase.breakdown.createdToDataSeenMs!)],
    ["    data seen → True", ms(phase.breakdown.dataSeenToSucceededMs!)],
    [
      "    InProgress seen",
      `${ms(phase.breakdown.inProgressSeenMs!)}; never seen ${phase.notSeenInProgress}`,
    ],
    [
      "  resolver, in process",
      `picked up → outcome written: mean ${rv.meanMs} ms, p50 ≈ ${rv.p50Ms} ms, p90 ≈ ${rv.p90Ms} ms; outcomes ${JSON.stringify(rv.outcomes)}; cache ${JSON.stringify(rv.cache)}`,
    ],
    ["  wall time", `${phase.wallSeconds} s`],
    ["  throughput", `${phase.throughputPerSecond} requests/s`],
    ...timelineRows(phase),
    ...svcRows(phase, controllers),
    [
      "  status writes",
      `lifecycle-controller ${lcWrites} (${round(lcWrites / N, 2)}/request), cluster-resolver ${rv.statusWrites} (${round(rv.statusWrites / N, 2)}/request)`,
    ],
    cpuRow(phase),
    ["  CPU per request", `${result.cluster.cpuMsPerRequest} ms (all processes of the run)`],
    ...Object.entries(phase.apiCalls).map(([r, c]): [string, string] => [`  API calls: ${r}`, calls(c)]),
    ["  client", `${phase.client.retries} retries, ${phase.client.watchRestarts} watch restarts`],
  ];
  if (floor) {
    const f = floor.phase;
    rows.push(
      ["", ""],
      [
        "floor (same run)",
        `${N} requests, ${CONCURRENCY} clients${CLOSED_LOOP ? " (closed loop)" : ""} (warm-up ${WARMUP})`,
      ],
      ["  completed", `${f.completed}/${N} (failed ${f.failed}, incomplete ${f.incomplete})`],
      ["  latency ms", ms(f.latencyMs)],
      ["    create", ms(f.breakdown.createMs!)],
      ["    status.data write", ms(f.breakdown.statusWriteMs!)],
      ["    data written → True", ms(f.breakdown.dataWrittenToSucceededMs!)],
      ["  wall time", `${f.wallSeconds} s`],
      ["  throughput", `${f.throughputPerSecond} requests/s`],
      ...timelineRows(f),
      ...svcRows(f, { "lifecycle-controller": floor.controller }),
      cpuRow(f),
      ["  CPU per request", `${result.floor?.cpuMsPerRequest} ms`],
      ["  API calls", calls(f.apiCalls.resolutionrequests ?? {})],
    );
  }
  rows.push(["", ""]);
  const same = result.overFloor.sameRun;
  if (same) {
    rows.push([
      "over the floor, same run",
      `resolver adds ${same.latencyMs.p50} ms at p50 (p90 ${same.latencyMs.p90}, p99 ${same.latencyMs.p99}, max ${same.latencyMs.max}); throughput ×${same.throughputRatio}`,
    ]);
  }
  const doc = result.overFloor.documented;
  rows.push(
    "error" in doc
      ? ["over the floor, documented", `unavailable: ${doc.error}`]
      : [
          "over the floor, documented",
          `resolver adds ${doc.latencyMs.p50} ms at p50 (p90 ${doc.latencyMs.p90}, p99 ${doc.latencyMs.p99}) over the floor's p50 ${doc.floor.p50} ms; throughput ×${doc.throughputRatio} of ${doc.floor.throughputPerSecond}/s. Cross-run comparison: ${doc.floor.source} (${doc.floor.requests} requests, ${doc.floor.concurrency} clients)${N === doc.floor.requests && CONCURRENCY === doc.floor.concurrency ? "" : `, this run ${N} requests, ${CONCURRENCY} clients: not like for like`}`,
        ],
  );
  rows.push(
    [
      "machine",
      `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}`,
    ],
    ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
  );
  console.log(`\n${table(rows)}\n`);
  console.log(JSON.stringify(result));
  if (flags.samples) {
    const csv = [floor ? samplesCsv(floor.phase.batch, "floor") : "", samplesCsv(phase.batch, "cluster")];
    writeFileSync(flags.samples, SAMPLES_CSV_HEADER + csv.join(""));
  }
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
  // the control plane goes away with the namespaces in it; scenario cleanup is not needed
  await cp?.stop();
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
