// Benchmark: pipe requests on a real node. A private control plane (with an
// audit log, to tell whose API calls a pipe costs), the real node of the e2e
// harness (containerd, kubelet, kube-controller-manager, kube-scheduler), the
// real lifecycle-controller and pipe-resolver processes under their shipped
// RBAC (with the namespace's pipe opt-in) and default configs, and
// --concurrency clients creating --requests pipe requests of one Pipe whose
// init container sleeps --sleep seconds and writes, by its own clock, when it
// started and ended. Latency = Succeeded=True seen − just before the create;
// the resolver's share = latency − the init container's own run; the split
// between them comes from the request and pod watches.
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
import { type ConfigMapObject, configMaps, type KubeClient, RestKubeClient } from "@quarry/kube";
import { NAMESPACE_ROLE } from "@quarry/pipe-resolver/resolver";
import { callsByClient, clientOf, readAudit } from "./lib/audit.ts";
import { loadFlags, onePhase, runBenchmark } from "./lib/benchmark.ts";
import { CpuWindow } from "./lib/cpu.ts";
import { runPhase } from "./lib/phase.ts";
import { pipeReport } from "./lib/pipe-report.ts";
import { initRun, type PipeSample, pipeSpans, uptimeClock } from "./lib/pipe-spans.ts";
import { childPids } from "./lib/proc.ts";
import { ProcessGroupCpu } from "./lib/proc-group.ts";
import { controlPlaneVersions, machineInfo } from "./lib/report.ts";
import {
  createWithRetry,
  SAMPLES_CSV_HEADER,
  type Sample,
  samplesCsv,
  startWatch,
  watchObjects,
} from "./lib/requests.ts";
import { meanQueueWaitMs, stepView } from "./lib/resolver-view.ts";
import { log, sleep } from "./lib/run.ts";
import { logWarnings } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";

const PIPE = "load";
const FILE = "t";

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

/**
 * Cores busy outside this run's processes over `ms`, while it idles (after `settleMs`: a new
 * namespace keeps kube-controller-manager busy for a moment): other work on the machine, if large.
 */
async function backgroundCores(pids: Record<string, number | undefined>, settleMs: number, ms: number) {
  await sleep(settleMs);
  const window = new CpuWindow(pids);
  await sleep(ms);
  return round(window.end().foreign / (ms / 1000), 2);
}

await runBenchmark({
  name: "pipe-resolver",
  about: "Pipe requests on the real node: the init container's own run against the resolver's share.",
  deadline: 900,
  flags: {
    ...loadFlags(50, "measured pipe requests"),
    warmup: { type: "int", default: 3, min: 0, help: "pipes created and discarded first" },
    sleep: {
      type: "number",
      default: 2,
      min: 0,
      arg: "S",
      help: "the init container's workload, in seconds",
    },
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
      const podWatch = startWatch(ctx.signal, (stop, listed) =>
        watchObjects<Pod>(
          RestKubeClient.fromEnvironment(bench.cp.adminKubeconfig),
          pods,
          ns,
          (type, pod, at) => timelines.observe(type, pod, at),
          stop,
          { restarts: 0 },
          { onListed: listed, what: "pod watch" },
        ),
      );
      await podWatch.ready;
      const background = await backgroundCores(
        { ...pids, lc: lc.svc.pid, resolver: resolver.svc.pid },
        5000,
        5000,
      );
      log(`other work keeps ${background} cores busy while this run idles`);
      const clientStats = { retries: 0 };
      const send = async (client: KubeClient, name: string, _i: number, s: Sample) => {
        await createWithRetry(
          client,
          newRequest(ns, name, PIPE_LABELS, { pipe: PIPE }),
          clientStats,
          ctx.signal,
        );
        s.created = performance.now();
      };
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
        send,
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
      const clock = uptimeClock();
      const samples: PipeSample[] = [];
      const byRequest = new Map(timelines.list().map((p) => [p.request, p]));
      for (const s of phase.batch.samples) {
        const out = await bench.admin
          .get<ConfigMapObject & { binaryData?: Record<string, string> }>(
            configMaps,
            ns,
            `${s.name}-${PIPE}-${FILE}`,
          )
          .catch(() => undefined);
        const text = Buffer.from(out?.binaryData?.[FILE] ?? "", "base64").toString();
        samples.push({ request: s, pod: byRequest.get(s.name), init: initRun(text, clock) });
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
    return {
      benchmark: "pipe-resolver",
      date: new Date().toISOString(),
      params: {
        requests: f.requests,
        concurrency: f.concurrency,
        warmup: f.warmup,
        closedLoop: f["closed-loop"],
        sleepSeconds: f.sleep,
        pendingTimeout: f["pending-timeout"],
        settleSeconds: f.settle,
        logLevel: f["log-level"],
        resolverWorkers: process.env.QUARRY_CONCURRENCY ?? "8 (default)",
      },
      completed: phase.completed,
      failed: phase.failed,
      incomplete: phase.incomplete,
      failures: phase.failures,
      spans: pipeSpans(samples),
      podsSeen: measuredPods.length,
      podsAtOnce: maxOverlap(measuredPods.map((p) => [p.added, p.deleted])),
      initRunningAtOnce: maxOverlap(samples.map((p) => [p.init?.start, p.init?.end])),
      // the resolver's own view: pending steps wait on the pod, the final one copies and stores
      resolverSteps: {
        pending: stepView(phase, "pipe-resolver", "pipe", "pending", f.requests),
        succeeded: stepView(phase, "pipe-resolver", "pipe", "succeeded", f.requests),
        meanQueueWaitMs: meanQueueWaitMs(phase, "pipe-resolver", "pipe-resolver"),
      },
      wallSeconds: phase.wallSeconds,
      throughputPerSecond: phase.throughputPerSecond,
      apiCallsByClient: callsByClient(calls, (u) => clientOf(u, quarry)),
      apiCalls: phase.apiCalls,
      cpuSecondsMeasured: phase.cpu,
      backgroundCoresBefore: m.background,
      shimCpuSeconds: m.shimSeconds,
      controllers: m.controllers,
      warnings: { "lifecycle-controller": logWarnings(lc.svc), "pipe-resolver": logWarnings(resolver.svc) },
      client: { ...phase.client, retries: m.clientStats.retries },
      node: { startSeconds: round(node.startMs / 1000, 1) },
      machine: machineInfo(versions),
      setupSeconds: round((phase.batch.start - ctx.startedAt) / 1000, 1),
    };
  },

  report: (r) => pipeReport(r),
  ok: (r, ctx) => r.completed === ctx.flags.requests,
  samples: (_s, [m]) => SAMPLES_CSV_HEADER + (m ? samplesCsv(m.phase.batch, "pipe") : ""),
});
