// Benchmark: the cluster resolver's hot path. A private control plane with
// Quarry's API and the Tekton CRD stand-ins, a namespace holding --tasks Tasks
// (applied before the resolver starts, so its informer serves them all), and
// the real lifecycle-controller and cluster-resolver processes under their
// shipped RBAC. --concurrency clients create --requests ResolutionRequests of
// type `cluster`; nothing else touches them. Compared with the lifecycle
// floor: the documented figures (docs/performance.md, a cross-run comparison),
// and with --with-floor the floor measured first on the same control plane.
import { performance } from "node:perf_hooks";
import { newScenario } from "@quarry/harness/scenario";
import type { KubeClient } from "@quarry/kube";
import { loadFlags, runBenchmark } from "./lib/benchmark.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import {
  apiCallRows,
  clientRow,
  cpuRow,
  documentedRow,
  latencyRows,
  outcomeJson,
  sameRunRow,
  serviceRow,
  timelineRows,
} from "./lib/phase-report.ts";
import { controllerConcurrency, controlPlaneVersions, machineInfo, machineRows } from "./lib/report.ts";
import { createWithRetry, SAMPLES_CSV_HEADER, type Sample, samplesCsv } from "./lib/requests.ts";
import { resolverView } from "./lib/resolver-view.ts";
import type { ServiceFigures } from "./lib/service-stats.ts";
import { ms, type Row, round, table, versus } from "./lib/stats.ts";
import { applyClusterTasks, clusterRequest } from "./lib/workloads.ts";

/** The figures of a phase that go to the JSON result (no per-request samples, no /metrics text). */
function phaseJson(p: PhaseResult, controllers: Record<string, ServiceFigures>) {
  const cpuAll = Object.values(p.cpu.processes).reduce((a, b) => a + b, 0) + p.cpu.benchDriver;
  return {
    ...outcomeJson(p),
    notSeenInProgress: p.notSeenInProgress,
    controllers: Object.fromEntries(
      Object.entries(controllers).map(([name, f]) => [
        name,
        { ...f, cpuSecondsMeasured: p.cpu.processes[name], logLines: p.services[name]?.logLines ?? {} },
      ]),
    ),
    cpuSecondsMeasured: p.cpu,
    cpuMsPerRequest: round((cpuAll * 1000) / Math.max(1, p.completed), 2),
    apiCalls: p.apiCalls,
    client: p.client,
    lifecycleStatusWrites: p.services["lifecycle-controller"]?.logLines["request condition updated"] ?? 0,
  };
}

interface Measured {
  phase: PhaseResult;
  controllers: Record<string, ServiceFigures>;
}

await runBenchmark({
  name: "cluster-hot",
  about: "The cluster resolver's hot path: requests for one of --tasks Tasks its informer holds.",
  deadline: 300,
  flags: {
    ...loadFlags(1000),
    tasks: {
      type: "int",
      default: 50,
      min: 1,
      help: "Tasks in the namespace; request i asks for Task i mod N",
    },
    "closed-loop": {
      type: "boolean",
      help: "each client waits for Succeeded=True before creating its next request",
    },
    "with-floor": {
      type: "boolean",
      help: "measure the lifecycle floor first, in the same run (same-run comparison)",
    },
  },
  notes: "The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).",

  async setup(ctx) {
    return {
      versions: controlPlaneVersions(),
      plane: await ctx.controlPlane({ tekton: true }),
      clientStats: { retries: 0 },
    };
  },

  phases(ctx, { plane, clientStats }) {
    const f = ctx.flags;
    const sizes = { concurrency: f.concurrency, warmup: f.warmup, requests: f.requests, signal: ctx.signal };
    const floor = {
      name: "floor",
      run: async (): Promise<Measured> => {
        const r = await runSameRunFloor({
          ...sizes,
          plane,
          services: ctx.services,
          clientStats,
          closedLoop: f["closed-loop"],
        });
        return { phase: r.phase, controllers: { "lifecycle-controller": r.controller } };
      },
    };
    const cluster = {
      name: "cluster",
      run: async (): Promise<Measured> => {
        const scn = await newScenario("bench-cluster", { cp: plane.info });
        await applyClusterTasks(plane.admin, scn.namespace, f.tasks);
        const lc = await ctx.services.start(scn, "lifecycle-controller");
        const resolver = await ctx.services.start(scn, "cluster-resolver");
        const send = async (client: KubeClient, name: string, i: number, s: Sample) => {
          await createWithRetry(
            client,
            clusterRequest(scn.namespace, name, i, f.tasks),
            clientStats,
            ctx.signal,
          );
          s.created = performance.now();
        };
        const phase = await runPhase({
          ...sizes,
          name: "cluster",
          cp: plane.cp,
          namespace: scn.namespace,
          services: [lc.svc, resolver.svc],
          pids: plane.pids,
          send,
          closedLoop: f["closed-loop"],
          resources: ["resolutionrequests", "tasks", "events"],
        });
        const controllers = {
          "lifecycle-controller": await lc.stats.final(),
          "cluster-resolver": await resolver.stats.final(),
        };
        return { phase, controllers };
      },
    };
    return f["with-floor"] ? [floor, cluster] : [cluster];
  },

  result(ctx, { versions }, phases) {
    const f = ctx.flags;
    const cluster = phases.at(-1)!;
    const floor = phases.length > 1 ? phases[0] : undefined;
    const p = cluster.phase;
    const lat = p.latencyMs;
    const documented = documentedFloor();
    const json = phaseJson(p, cluster.controllers);
    const statusPatches = p.apiCalls.resolutionrequests?.["PATCH/status 200"] ?? 0;
    return {
      benchmark: "cluster-hot",
      date: new Date().toISOString(),
      params: {
        requests: f.requests,
        concurrency: f.concurrency,
        tasks: f.tasks,
        warmup: f.warmup,
        withFloor: f["with-floor"],
        closedLoop: f["closed-loop"],
        logLevel: f["log-level"],
        controllerConcurrency: controllerConcurrency(),
      },
      cluster: {
        ...json,
        resolver: {
          ...(resolverView(p, "cluster-resolver", "cluster") ?? {
            outcomes: {},
            meanMs: Number.NaN,
            p50Ms: Number.NaN,
            p90Ms: Number.NaN,
            cache: {},
          }),
          // every status PATCH that succeeded minus the lifecycle controller's (it logs each one)
          statusWrites: statusPatches - json.lifecycleStatusWrites,
        },
      },
      floor: floor ? phaseJson(floor.phase, floor.controllers) : undefined,
      overFloor: {
        sameRun: floor
          ? {
              latencyMs: versus(lat, floor.phase.latencyMs),
              throughputRatio: round(p.throughputPerSecond / floor.phase.throughputPerSecond, 2),
            }
          : undefined,
        // a cross-run comparison: another run, on another day, with the floor's default 500 requests
        documented:
          documented instanceof Error
            ? { error: documented.message }
            : {
                floor: documented,
                latencyMs: versus(lat, documented),
                throughputRatio: round(p.throughputPerSecond / documented.throughputPerSecond, 2),
              },
      },
      machine: machineInfo(versions),
      setupSeconds: round((p.batch.start - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx, _s, phases) {
    const f = ctx.flags;
    const n = f.requests;
    const loop = `${n} requests, ${f.concurrency} clients${f["closed-loop"] ? " (closed loop)" : ""}`;
    const section = (m: Measured, j: ReturnType<typeof phaseJson>, floor: boolean): Row[] => [
      ...latencyRows(m.phase, n, floor),
      ...(floor
        ? []
        : ([
            [
              "    InProgress seen",
              `${ms(m.phase.breakdown.inProgressSeenMs!)}; never seen ${m.phase.notSeenInProgress}`,
            ],
          ] as Row[])),
      ["  wall time", `${m.phase.wallSeconds} s`],
      ["  throughput", `${m.phase.throughputPerSecond} requests/s`],
      ...timelineRows(m.phase),
      ...Object.entries(m.controllers).map(([name, c]) =>
        serviceRow(`  ${name}`, c, m.phase.cpu.processes[name]),
      ),
      cpuRow(m.phase),
      ["  CPU per request", `${j.cpuMsPerRequest} ms (all processes of the run)`],
      ...apiCallRows(m.phase),
      clientRow(m.phase),
    ];
    const rv = r.cluster.resolver;
    const lcWrites = r.cluster.lifecycleStatusWrites;
    const floor = phases.length > 1 ? phases[0] : undefined;
    const rows: Row[] = [
      ["cluster resolver (hot)", `${loop}, ${f.tasks} Tasks (warm-up ${f.warmup})`],
      ...section(phases.at(-1)!, r.cluster, false),
      [
        "  resolver, in process",
        `picked up → outcome written: mean ${rv.meanMs} ms, p50 ≈ ${rv.p50Ms} ms, p90 ≈ ${rv.p90Ms} ms; outcomes ${JSON.stringify(rv.outcomes)}; cache ${JSON.stringify(rv.cache)}`,
      ],
      [
        "  status writes",
        `lifecycle-controller ${lcWrites} (${round(lcWrites / n, 2)}/request), cluster-resolver ${rv.statusWrites} (${round(rv.statusWrites / n, 2)}/request)`,
      ],
      ...((floor && r.floor
        ? [["", ""], ["floor (same run)", `${loop} (warm-up ${f.warmup})`], ...section(floor, r.floor, true)]
        : []) as Row[]),
      ["", ""],
      ...sameRunRow(r.overFloor.sameRun),
      documentedRow(r.overFloor.documented, n, f.concurrency),
      ...machineRows(r.machine),
    ];
    return table(rows);
  },

  ok: (_r, ctx, _s, phases) =>
    phases.length === (ctx.flags["with-floor"] ? 2 : 1) &&
    phases.every((m) => m.phase.completed === ctx.flags.requests),
  samples: (_s, phases) =>
    SAMPLES_CSV_HEADER + phases.map((m) => samplesCsv(m.phase.batch, m.phase.name)).join(""),
});
