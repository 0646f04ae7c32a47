// Benchmark: the cluster resolver's hot path. A resolver burst (lib/burst.ts)
// against the real cluster-resolver, whose namespace holds --tasks Tasks
// (applied before it starts, so its informer serves them all); request i asks
// for Task i mod --tasks. Compared with the lifecycle floor: the documented
// figures (docs/performance.md, a cross-run comparison), and with --with-floor
// the floor measured first on the same control plane.
import { loadFlags, runBenchmark } from "./lib/benchmark.ts";
import { burstsOf, floorOf, outcomeJson, overFloor, resolverBurst } from "./lib/burst.ts";
import { documentedFloor } from "./lib/floor.ts";
import type { PhaseResult } from "./lib/phase.ts";
import { controllerConcurrency, machineInfo, machineRows } from "./lib/report.ts";
import { resolverView } from "./lib/resolver-view.ts";
import type { ServiceFigures } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";
import { columns, flagParams, valueReport } from "./lib/value-rows.ts";
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

const NO_VIEW = { outcomes: {}, meanMs: Number.NaN, p50Ms: Number.NaN, p90Ms: Number.NaN, cache: {} };

await runBenchmark(
  resolverBurst({
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
    resolver: "cluster-resolver",
    type: "cluster",
    namespace: "bench-cluster",
    controlPlane: { tekton: true },
    resources: ["resolutionrequests", "tasks", "events"],
    phaseNames: () => ["cluster"],
    withFloor: (f) => f["with-floor"],
    setup: async () => undefined,
    configure: (scn, _s, ctx, plane) => applyClusterTasks(plane.admin, scn.namespace, ctx.flags.tasks),
    plan: (ctx, _s, _name, { lc, resolver }) => ({
      definition: `${ctx.flags.tasks} Tasks`,
      request: (ns, name, i) => clusterRequest(ns, name, i, ctx.flags.tasks),
      close: async (): Promise<Record<string, ServiceFigures>> => ({
        "lifecycle-controller": await lc.stats.final(),
        "cluster-resolver": await resolver.stats.final(),
      }),
    }),

    result(ctx, { versions }, steps) {
      const f = ctx.flags;
      const cluster = burstsOf(steps)[0]!;
      const floor = floorOf(steps);
      const p = cluster.phase;
      const documented = documentedFloor();
      const json = phaseJson(p, cluster.x);
      const statusPatches = p.apiCalls.resolutionrequests?.["PATCH/status 200"] ?? 0;
      return {
        benchmark: "cluster-hot",
        date: new Date().toISOString(),
        params: { ...flagParams(f), controllerConcurrency: controllerConcurrency() },
        cluster: {
          ...json,
          resolver: {
            ...(resolverView(p, "cluster-resolver", "cluster") ?? NO_VIEW),
            // every status PATCH that succeeded minus the lifecycle controller's (it logs each one)
            statusWrites: statusPatches - json.lifecycleStatusWrites,
          },
        },
        floor: floor ? phaseJson(floor.phase, { "lifecycle-controller": floor.controller }) : undefined,
        overFloor: {
          sameRun: floor ? overFloor(p, floor.phase.latencyMs, floor.phase.throughputPerSecond) : undefined,
          // a cross-run comparison: another run, on another day, with the floor's default 500 requests
          documented:
            documented instanceof Error
              ? { error: documented.message }
              : { floor: documented, ...overFloor(p, documented, documented.throughputPerSecond) },
        },
        machine: machineInfo(versions),
        setupSeconds: round((p.batch.start - ctx.startedAt) / 1000, 1),
      };
    },

    report(r, ctx) {
      const f = ctx.flags;
      const loop = f["closed-loop"] ? " (closed loop)" : "";
      type Phase = ReturnType<typeof phaseJson> & { name: string };
      const md = columns<Phase>(
        [
          ["phase", (j) => j.name],
          ["p50 ms", (j) => j.latencyMs.p50],
          ["p90 ms", (j) => j.latencyMs.p90],
          ["p99 ms", (j) => j.latencyMs.p99],
          ["req/s", (j) => j.throughputPerSecond],
          [`lifecycle status writes per ${f.requests}`, (j) => j.lifecycleStatusWrites],
          ["409s", (j) => j.apiCalls.resolutionrequests?.["PATCH/status 409"] ?? 0],
          [
            "RSS peak lifecycle / resolver MiB",
            (j) =>
              `${j.controllers["lifecycle-controller"]?.peakRssMiB} / ${j.controllers["cluster-resolver"]?.peakRssMiB ?? "–"}`,
          ],
        ],
        [
          ...(r.floor ? [{ ...r.floor, name: "floor (same run)" }] : []),
          { ...r.cluster, name: "cluster resolver" },
        ],
      );
      return valueReport(
        [
          [
            "cluster resolver (hot)",
            `${f.requests} requests, ${f.concurrency} clients${loop}, ${f.tasks} Tasks (warm-up ${f.warmup})`,
          ],
          ["cluster", r.cluster],
          ["floor (same run)", r.floor ?? "skipped"],
          ["over the floor", r.overFloor],
          ...machineRows(r.machine),
        ],
        md.header,
        md.rows,
      );
    },
  }),
);
