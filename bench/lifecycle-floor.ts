// Benchmark: the lifecycle controller's "API floor". A private control plane,
// the real lifecycle-controller with its shipped RBAC, and N ResolutionRequests
// whose creator writes status.data itself right after creating each one (an
// instant resolver). Latency = Succeeded=True seen on a watch − just before the
// create was sent: the least time any resolution can take through Quarry on
// this machine, the floor resolver benchmarks are compared against.
//
// With --ttl (the controller's completed-request-ttl) it also shows whether
// completed requests pile up; with --rate R the requests are sent open loop at
// R per second, and the controller's RSS, sampled every second, is read at
// 10, 25, 50, 75 and 100 % of the requests sent (docs/performance.md, "10,000
// requests at a steady rate").
import { resolutionRequests } from "@quarry/api";
import { newScenario, setLifecycleConfig } from "@quarry/harness/scenario";
import { type KubeClient, parseDuration } from "@quarry/kube";
import { loadFlags, onePhase, runBenchmark } from "./lib/benchmark.ts";
import { floorSend } from "./lib/floor.ts";
import { runPhase } from "./lib/phase.ts";
import { vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { controllerConcurrency, controlPlaneVersions, machineInfo, machineRows } from "./lib/report.ts";
import { SAMPLES_CSV_HEADER, samplesCsv } from "./lib/requests.ts";
import { RssSeries } from "./lib/rss-series.ts";
import { log, sleep } from "./lib/run.ts";
import { MiB } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";
import { flagParams, valueReport } from "./lib/value-rows.ts";

/** fractions of the measured requests sent at which the controller's RSS and the namespace are read */
const CHECKPOINTS = [0.1, 0.25, 0.5, 0.75, 1];

/** The requests in `namespace` without listing them all: one item and the apiserver's remainingItemCount. */
async function requestsIn(client: KubeClient, namespace: string): Promise<number> {
  const page = await client.list(resolutionRequests, namespace, { limit: 1 });
  const remaining = (page.metadata as { remainingItemCount?: number }).remainingItemCount;
  if (remaining !== undefined) return page.items.length + remaining;
  if (!page.metadata.continue) return page.items.length;
  return (await client.list(resolutionRequests, namespace)).items.length;
}

await runBenchmark({
  name: "lifecycle-floor",
  about: "The lifecycle controller's API floor: requests whose creator writes status.data itself.",
  deadline: 300,
  flags: {
    ...loadFlags(500),
    ttl: {
      type: "string",
      default: "0",
      arg: "D",
      help: "the controller's completed-request-ttl (0: never delete)",
    },
    rate: {
      type: "int",
      default: 0,
      min: 0,
      arg: "R",
      help: "send R requests/s open loop, spread evenly over the clients (0: closed loop)",
    },
    "max-in-flight": {
      type: "int",
      default: 500,
      min: 1,
      help: "with --rate: hold the next request back while N are in flight",
    },
  },
  notes: "The controller inherits this process's environment, e.g. QUARRY_CONCURRENCY (workers).",

  async setup(ctx) {
    const versions = controlPlaneVersions();
    const plane = await ctx.controlPlane();
    const scn = await newScenario("bench-lc", { cp: plane.info });
    await setLifecycleConfig(scn, { "completed-request-ttl": ctx.flags.ttl });
    const lc = await ctx.services.start(scn, "lifecycle-controller");
    const series = new RssSeries(lc.svc.pid, 1000);
    ctx.defer(() => series.stop());
    return { versions, plane, scn, lc, series, clientStats: { retries: 0 } };
  },

  phases: (ctx, { plane, scn, lc, series, clientStats }) =>
    onePhase("floor", async () => {
      const { requests: n, rate } = ctx.flags;
      const ttlMs = ctx.flags.ttl === "0" ? 0 : parseDuration(ctx.flags.ttl);
      const checkpoint = (label: string) =>
        series.checkpoint(
          label,
          () => requestsIn(plane.admin, scn.namespace),
          async () => {
            const r = await lc.svc.ops("/metrics");
            return r.status === 200 ? promSum(r.body, "nodejs_heap_size_used_bytes") : Number.NaN;
          },
        );
      const checkpointAt = new Map(CHECKPOINTS.map((f) => [Math.max(1, Math.ceil(f * n)), f]));
      const taken: Promise<unknown>[] = [];
      const left = async () => (await plane.admin.list(resolutionRequests, scn.namespace)).items.length;
      const phase = await runPhase({
        ...ctx.flags,
        name: "floor",
        cp: plane.cp,
        namespace: scn.namespace,
        services: [lc.svc],
        pids: plane.pids,
        signal: ctx.signal,
        send: floorSend(scn.namespace, clientStats, ctx.signal),
        pacing: rate > 0 ? { rate, maxInFlight: ctx.flags["max-in-flight"] } : undefined,
        onSent: (sent) => {
          const f = checkpointAt.get(sent);
          if (f !== undefined) taken.push(checkpoint(`${round(f * 100, 0)} % sent`));
        },
      });
      await Promise.all(taken);
      await checkpoint("all Succeeded");
      const rssAtEndMiB = MiB(vmKiB(lc.svc.pid, "VmRSS"));
      const requestsLeftAtEnd = await left();
      // with a ttl: wait it out again (plus the controller's pass), then see what is left
      let afterTtl: { rssMiB: number; requestsLeft: number; afterSeconds: number } | undefined;
      if (ttlMs > 0) {
        const waitMs = ttlMs + 5_000;
        log(`waiting ${waitMs / 1000} s for completed requests past their ttl to go`);
        await sleep(waitMs);
        const rssMiB = MiB(vmKiB(lc.svc.pid, "VmRSS"));
        afterTtl = { rssMiB, requestsLeft: await left(), afterSeconds: round(waitMs / 1000, 1) };
        await checkpoint("ttl + 5 s later");
      }
      series.stop();
      return { phase, rssAtEndMiB, requestsLeftAtEnd, afterTtl, controller: await lc.stats.final() };
    }),

  result(ctx, { versions, series, clientStats }, [m]) {
    if (!m) throw new Error("the floor did not run");
    const { phase: p } = m;
    const { rate } = ctx.flags;
    const sentAt = (pct: number) =>
      series.checkpoints.find((c) => c.label === `${pct} % sent`)?.t ?? Number.NaN;
    // RSS growth while the second half of the requests was sent: ~0 when flat at this rate
    const secondHalf = series.slopeKiBPerSecond(sentAt(50), sentAt(100));
    const lines = p.services["lifecycle-controller"]?.logLines ?? {};
    const b = p.breakdown;
    return {
      benchmark: "lifecycle-floor",
      date: new Date().toISOString(),
      params: {
        ...flagParams(ctx.flags, { "log-level": "controllerLogLevel" }),
        rate: rate > 0 ? rate : undefined,
        controllerConcurrency: controllerConcurrency(),
      },
      completed: p.completed,
      failed: p.failed,
      incomplete: p.incomplete,
      latencyMs: p.latencyMs,
      wallSeconds: p.wallSeconds,
      throughputPerSecond: p.throughputPerSecond,
      paced: p.batch.paced,
      breakdown: {
        createMs: b.createMs!,
        statusWriteMs: b.statusWriteMs!,
        inProgressSeenMs: b.inProgressSeenMs!,
        dataWrittenToSucceededMs: b.dataWrittenToSucceededMs!,
      },
      notSeenInProgress: p.notSeenInProgress,
      controller: {
        ...m.controller,
        rssAtEndMiB: m.rssAtEndMiB,
        requestsLeftAtEnd: m.requestsLeftAtEnd,
        completedRequestTtl: ctx.flags.ttl,
        afterTtl: m.afterTtl,
        rssSeries: {
          intervalSeconds: 1,
          checkpoints: series.checkpoints,
          slopeSecondHalfKiBPerSecond: secondHalf,
          slopeSecondHalfKiBPerRequest: rate > 0 ? round(secondHalf / rate, 2) : undefined,
          // the same over the last quarter: V8 grows its heap in steps, so a half can hold one step and still end flat
          slopeLastQuarterKiBPerSecond: series.slopeKiBPerSecond(sentAt(75), sentAt(100)),
          points: series.points,
        },
        cpuSecondsMeasured: p.cpu.processes["lifecycle-controller"] ?? Number.NaN,
        statusWrites: lines["request condition updated"] ?? 0,
        reconcileRetries: lines["reconcile failed, retrying"] ?? 0,
      },
      otherCpuSecondsMeasured: {
        kubeApiserver: p.cpu.processes["kube-apiserver"],
        etcd: p.cpu.processes.etcd,
        benchDriver: p.cpu.benchDriver,
        // the whole machine's busy CPU, and what none of this run's processes used (a noisy run if large)
        machine: p.cpu.machine,
        foreign: p.cpu.foreign,
      },
      // every ResolutionRequest call the apiserver served in the measured phase (bench + controller)
      apiCalls: p.apiCalls.resolutionrequests ?? {},
      client: { retries: clientStats.retries, watchRestarts: p.client.watchRestarts },
      machine: machineInfo(versions),
      setupSeconds: round((p.batch.start - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx) {
    const { requests: n, rate, concurrency, warmup } = ctx.flags;
    const { benchmark, date, params, machine, controller: c, ...figures } = r;
    const { points, checkpoints, ...slopes } = c.rssSeries;
    const l = r.latencyMs;
    return valueReport(
      [
        [
          "lifecycle-controller API floor",
          `${n} requests, ${rate > 0 ? `${rate}/s open loop over ` : ""}${concurrency} clients (warm-up ${warmup})`,
        ],
        ...Object.entries(figures),
        ["controller", { ...c, rssSeries: undefined }],
        ["controller RSS over the run", checkpoints],
        ["  RSS slopes", slopes],
        ...machineRows(machine),
      ],
      `run | p50 ms | p90 ms | p99 ms | max ms | wall s | req/s | peak RSS (VmHWM) MiB | controller CPU s (total / measured) | 409s per ${n}`,
      `${n} requests | ${l.p50} | ${l.p90} | ${l.p99} | ${l.max} | ${r.wallSeconds} | ${r.throughputPerSecond} | ${c.peakRssMiB} | ${c.cpuSeconds} / ${c.cpuSecondsMeasured} | ${r.apiCalls["PATCH/status 409"] ?? 0}`,
    );
  },

  ok: (r, ctx) => r.completed === ctx.flags.requests,
  samples: (_s, [m]) => SAMPLES_CSV_HEADER + (m ? samplesCsv(m.phase.batch, "floor") : ""),
});
