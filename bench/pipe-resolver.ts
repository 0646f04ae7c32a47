// Benchmark: pipe requests on the real node of the e2e harness, under the real lifecycle-controller and
// pipe-resolver. The init container times its own workload, so the resolver's share is the latency
// minus that run; the request and pod watches split it (docs/performance.md, "Pipe resolver").
import { performance } from "node:perf_hooks";
import { pipeStrategies, pipes } from "@quarry/api";
import { startNode } from "@quarry/devcluster/node";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { type Pod, pods } from "@quarry/harness/node";
import {
  configMapOutputs,
  nodeConfig,
  PIPE_LABELS,
  pipeObject,
  pipeStrategy,
  scriptPod,
} from "@quarry/harness/pipe-scenario";
import { maxOverlap, PodTimelines } from "@quarry/harness/pod-timeline";
import { newRequest, newScenario, setConfig, setLifecycleConfig } from "@quarry/harness/scenario";
import { type ConfigMapObject, configMaps, RestKubeClient } from "@quarry/kube";
import { NAMESPACE_ROLE } from "@quarry/pipe-resolver/resolver";
import { callsByClient, clientOf, readAudit } from "./lib/audit.ts";
import { loadFlags, onePhase, runBenchmark } from "./lib/benchmark.ts";
import { CpuWindow } from "./lib/cpu.ts";
import { outcome, runPhase } from "./lib/phase.ts";
import { initRun, type PipeSample, pipeSpans, uptimeClock } from "./lib/pipe-spans.ts";
import { childPids } from "./lib/proc.ts";
import { ProcessGroupCpu } from "./lib/proc-group.ts";
import { controlPlaneVersions, machineInfo, machineRows } from "./lib/report.ts";
import { createWithRetry, SAMPLES_CSV_HEADER, samplesCsv, startWatch, watchObjects } from "./lib/requests.ts";
import { meanQueueWaitMs, stepView } from "./lib/resolver-view.ts";
import { log, sleep } from "./lib/run.ts";
import { logWarnings } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";
import { flagParams, valueReport } from "./lib/value-rows.ts";

const PIPE = "load";
const FILE = "t";
type ConfigMapOut = ConfigMapObject & { binaryData?: Record<string, string> };

/** The node's processes, for their CPU (the containers below containerd's shims count as foreign). */
function nodePids(): Record<string, number | undefined> {
  const pid = (comm: string) => childPids(process.pid, comm)[0];
  // /proc's comm is cut at 15 characters
  return {
    kubelet: pid("kubelet"),
    containerd: pid("containerd"),
    "kube-controller-manager": pid("kube-controller"),
    "kube-scheduler": pid("kube-scheduler"),
  };
}

await runBenchmark({
  name: "pipe-resolver",
  about: "Pipe requests on the real node: the init container's own run against the resolver's share.",
  deadline: 900,
  flags: {
    ...loadFlags(50, "measured pipe requests"),
    warmup: { type: "int", default: 3, min: 0, help: "pipes created and discarded first" },
    sleep: { type: "number", default: 2, min: 0, arg: "S", help: "the init container's workload, seconds" },
    "pending-timeout": { type: "string", default: "5m", arg: "D", help: "the resolver's pending-timeout" },
    "closed-loop": {
      type: "boolean",
      help: "each client waits for its pipe to finish (with --concurrency 1: unloaded latency)",
    },
    settle: {
      type: "number",
      default: 5,
      min: 0,
      arg: "S",
      help: "pause after the warm-up and the batch, for the kubelet's last calls",
    },
  },
  notes: "The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).",

  async setup(ctx) {
    const f = ctx.flags;
    const versions = controlPlaneVersions();
    const bench = await ctx.controlPlane({ auditLog: true });
    log("starting the node (waits for another run's node to stop)");
    const node = await startNode(bench.cp, { log: (m) => log(`node: ${m}`), signal: ctx.signal });
    ctx.defer(() => node.stop().catch((err: unknown) => log(`node stop: ${String(err)}`)));
    const pids = { ...bench.pids, ...nodePids() };
    for (const p of Object.values(pids)) ctx.run.track(p);
    const scn = await newScenario("bench-pipe", { cp: bench.info });
    const ns = scn.namespace;
    await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "10m" });
    await setConfig(scn, "pipe-resolver-config", {
      ...nodeConfig(node),
      "pending-timeout": f["pending-timeout"],
    });
    await grantOptInRules(scn, {
      service: "pipe-resolver",
      rulesKey: "pipeNamespaceRules",
      role: NAMESPACE_ROLE,
    });
    // the workload, timed around it by the machine's clock as the container sees it
    const script = `read s _ < /proc/uptime; sleep ${f.sleep}; read e _ < /proc/uptime; echo "$s $e" > /out/${FILE}`;
    const outputs = configMapOutputs(`/out/${FILE}`);
    await bench.admin.create(
      pipeStrategies,
      pipeStrategy(ns, PIPE, scriptPod(node.toolsImage, script), [], { outputs }),
    );
    const files = [{ file: `/out/${FILE}`, kind: "ConfigMap" as const, key: FILE }];
    await bench.admin.create(pipes, pipeObject(ns, PIPE, { kind: "PipeStrategy", name: PIPE }, files));
    const lc = await ctx.services.start(scn, "lifecycle-controller");
    const resolver = await ctx.services.start(scn, "pipe-resolver");
    return { versions, bench, node, pids, ns, lc, resolver };
  },

  phases: (ctx, { bench, node, pids, ns, lc, resolver }) =>
    onePhase("pipe", async () => {
      const f = ctx.flags;
      // the container runtime's share: not children of this process, one shim per pod
      const shims = new ProcessGroupCpu(
        (comm, cmd) => comm.startsWith("containerd-shim") && cmd().includes(node.dir),
      );
      ctx.defer(() => shims.stop());
      // every pipe pod, warm-up and measured, from before the first request
      const timelines = new PodTimelines();
      const observe = (type: string, pod: Pod, at: number) => timelines.observe(type, pod, at);
      const admin = RestKubeClient.fromEnvironment(bench.cp.adminKubeconfig);
      const podWatch = startWatch(ctx.signal, (stop, onListed) =>
        watchObjects<Pod>(admin, pods, ns, observe, stop, { restarts: 0 }, { onListed, what: "pod watch" }),
      );
      await podWatch.ready;
      // other work on the machine: cores busy outside this run's processes while it idles, after a
      // pause (a new namespace keeps kube-controller-manager busy for a moment)
      await sleep(5000);
      const idle = new CpuWindow({ ...pids, lc: lc.svc.pid, resolver: resolver.svc.pid });
      await sleep(5000);
      const background = round(idle.end().foreign / 5, 2);
      log(`other work keeps ${background} cores busy while this run idles`);
      const clientStats = { retries: 0 };
      const phase = await runPhase({
        name: "pipe",
        cp: bench.cp,
        namespace: ns,
        services: [lc.svc, resolver.svc],
        pids,
        concurrency: f.concurrency,
        warmup: f.warmup,
        requests: f.requests,
        signal: ctx.signal,
        send: async (client, name, _i, s) => {
          await createWithRetry(
            client,
            newRequest(ns, name, PIPE_LABELS, { pipe: PIPE }),
            clientStats,
            ctx.signal,
          );
          s.created = performance.now();
        },
        closedLoop: f["closed-loop"],
        resources: ["resolutionrequests", "pods", "configmaps", "secrets", "events"],
        settleMs: f.settle * 1000,
      });
      const windowEnd = Date.now();
      shims.stop();
      const shimSeconds = round(shims.between(phase.batch.start, phase.batch.end), 2);
      await podWatch.stop();
      const controllers = {
        "lifecycle-controller": await lc.stats.final(),
        "pipe-resolver": await resolver.stats.final(),
      };
      // each init container's readings, from the ConfigMap its pipe wrote
      const clock = uptimeClock();
      const podOf = new Map(timelines.list().map((p) => [p.request, p]));
      const samples: PipeSample[] = [];
      for (const s of phase.batch.samples) {
        const name = `${s.name}-${PIPE}-${FILE}`;
        const out = await bench.admin.get<ConfigMapOut>(configMaps, ns, name).catch(() => undefined);
        const text = Buffer.from(out?.binaryData?.[FILE] ?? "", "base64").toString();
        samples.push({ request: s, pod: podOf.get(s.name), init: initRun(text, clock) });
      }
      return { phase, windowEnd, shimSeconds, controllers, samples, background, clientStats };
    }),

  result(ctx, { versions, bench, node, ns, lc, resolver }, [m]) {
    if (!m) throw new Error("the pipes did not run");
    const f = ctx.flags;
    const { phase, samples } = m;
    const measuredPods = samples.flatMap((p) => (p.pod ? [p.pod] : []));
    const quarry = {
      [`system:serviceaccount:${ns}:quarry-pipe-resolver`]: "pipe-resolver",
      [`system:serviceaccount:${ns}:quarry-lifecycle-controller`]: "lifecycle-controller",
      "quarry-admin": "bench (creates, watches)",
    };
    const calls = readAudit(bench.cp.auditLog!, performance.timeOrigin + phase.batch.start, m.windowEnd);
    const step = (outcome: string) => stepView(phase, "pipe-resolver", "pipe", outcome, f.requests);
    return {
      benchmark: "pipe-resolver",
      date: new Date().toISOString(),
      params: {
        ...flagParams(f, { sleep: "sleepSeconds", settle: "settleSeconds" }),
        resolverWorkers: process.env.QUARRY_CONCURRENCY ?? "8 (default)",
      },
      ...outcome(phase.batch, f.requests),
      spans: pipeSpans(samples),
      podsSeen: measuredPods.length,
      podsAtOnce: maxOverlap(measuredPods.map((p) => [p.added, p.deleted])),
      initRunningAtOnce: maxOverlap(samples.map((p) => [p.init?.start, p.init?.end])),
      // the resolver's own view: pending steps wait on the pod, the final one copies and stores
      resolverSteps: {
        pending: step("pending"),
        succeeded: step("succeeded"),
        meanQueueWaitMs: meanQueueWaitMs(phase, "pipe-resolver", "pipe-resolver"),
      },
      apiCallsByClient: callsByClient(calls, (u) => clientOf(u, quarry)),
      apiCalls: phase.apiCalls,
      cpuSecondsMeasured: phase.cpu,
      backgroundCoresBefore: m.background,
      // containerd's shims with the runc calls and containers they reaped (a lower bound)
      shimCpuSeconds: m.shimSeconds,
      controllers: m.controllers,
      warnings: { "lifecycle-controller": logWarnings(lc.svc), "pipe-resolver": logWarnings(resolver.svc) },
      client: { ...phase.client, retries: m.clientStats.retries },
      node: { startSeconds: round(node.startMs / 1000, 1) },
      machine: machineInfo(versions),
      setupSeconds: round((phase.batch.start - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx) {
    const f = ctx.flags;
    const { spans: s, params, machine, node, apiCallsByClient, ...pipes } = r;
    const n = f.requests;
    const total = (c: Record<string, number> = {}) => Object.values(c).reduce((a, b) => a + b, 0);
    const perPipe = (c?: Record<string, number>) => round(total(c) / n, 1);
    const clients = Object.entries(apiCallsByClient).sort(([, a], [, b]) => total(b) - total(a));
    const all = round(clients.reduce((a, [, c]) => a + total(c), 0) / n, 1);
    const byClient = clients.map(([client, c]) => [
      `${client}: ${perPipe(c)}`,
      Object.fromEntries(Object.entries(c).map(([k, v]) => [k, round(v / n, 2)])),
    ]);
    const busy = r.backgroundCoresBefore;
    const loop = f["closed-loop"] ? " (closed loop)" : "";
    const [lat, share] = [s.latencyMs!, s.resolverShareMs!];
    const p50 = (k: string) => s[k]?.p50;
    const by = (client: string) => perPipe(apiCallsByClient[client]);
    return valueReport(
      [
        [
          "pipe resolver",
          `${n} pipes, ${f.concurrency} clients${loop} (warm-up ${f.warmup}); init container sleeps ${f.sleep} s; resolver workers ${params.resolverWorkers}`,
        ],
        ["  spans ms", s],
        ["pipes", { ...pipes, benchmark: undefined, date: undefined }],
        ["  API calls per pipe (audit), by client", { all, ...Object.fromEntries(byClient) }],
        ["  shim CPU s per pipe (a lower bound)", round(r.shimCpuSeconds / n, 2)],
        [
          "  cores busy outside this run before it",
          busy > 0.3 ? `${busy}: other work, rerun when quieter` : busy,
        ],
        ...machineRows(machine, `; node started in ${node.startSeconds} s`),
      ],
      "pipes | sleep s | p50 | p99 | resolver's share p50 / p99 | create → pod seen | pod seen → init started | init ended → ready seen | ready seen → data seen | pipes/s | API calls per pipe: resolver / kubelet / all | runtime CPU s | machine CPU s | pods at once | busy cores before",
      `${n} | ${f.sleep} | ${lat.p50} | ${lat.p99} | ${share.p50} / ${share.p99} | ${p50("createToPodSeenMs")} | ${p50("podSeenToInitStartMs")} | ${p50("initEndToReadySeenMs")} | ${p50("readySeenToDataSeenMs")} | ${r.throughputPerSecond} | ${by("pipe-resolver")} / ${by("kubelet")} / ${all} | ${r.shimCpuSeconds} | ${r.cpuSecondsMeasured.machine} | ${r.podsAtOnce} | ${busy}`,
    );
  },

  ok: (r, ctx) => r.completed === ctx.flags.requests,
  samples: (_s, [m]) => SAMPLES_CSV_HEADER + (m ? samplesCsv(m.phase.batch, "pipe") : ""),
});
