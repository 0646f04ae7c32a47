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
//
//   node bench/pipe-resolver.ts [--requests 50] [--concurrency 16] [--sleep 2] [--json out.json]
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { pipeStrategies, pipes } from "@quarry/api";
import type { ControlPlane } from "@quarry/devcluster/controlplane";
import { startNode, type TestNode } from "@quarry/devcluster/node";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { type ConfigMapObject, configMaps, type KubeClient, RestKubeClient } from "@quarry/kube";
import {
  configMapOutputs,
  nodeConfig,
  PIPE_LABELS,
  pipeObject,
  pipeStrategy,
  scriptPod,
} from "../e2e/fixtures/pipe-scenario.ts";
import { type Pod, pods } from "../e2e/harness/node.ts";
import { maxOverlap, PodTimelines } from "../e2e/harness/pod-timeline.ts";
import { newRequest, newScenario, setConfig, setLifecycleConfig } from "../e2e/harness/scenario.ts";
import { NAMESPACE_ROLE } from "../services/pipe-resolver/src/resolver.ts";
import { callsByClient, clientOf, readAudit } from "./lib/audit.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { CpuWindow } from "./lib/cpu.ts";
import { loadOptions, loadSizes } from "./lib/flags.ts";
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
import { BoundedRun, log, sleep } from "./lib/run.ts";
import { BenchServices, logWarnings } from "./lib/service-stats.ts";
import { round } from "./lib/stats.ts";

const USAGE = `usage: node bench/pipe-resolver.ts [options]
  --requests N        measured pipe requests (default 50)
  --concurrency N     in-flight clients creating requests, open loop (default 16)
  --warmup N          pipe requests created and discarded first (default 3; 0 disables)
  --sleep S           seconds the init container sleeps (its workload; default 2)
  --pending-timeout D the resolver's pending-timeout (default 5m)
  --closed-loop       each client waits for its pipe to finish before the next (with --concurrency 1: unloaded latency)
  --settle S          seconds after the warm-up and the measured batch before counters are read (default 5)
  --deadline S        the whole run stops after S seconds, torn down either way (default 900)
  --log-level L       the services' LOG_LEVEL (default info)
  --json FILE         also write the JSON result to FILE
  --samples FILE      write every measured request's timeline (ms since the first create) as CSV
The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).`;

const { values: flags } = parseArgs({
  options: {
    ...loadOptions({ requests: "50", deadline: "900" }),
    warmup: { type: "string", default: "3" },
    sleep: { type: "string", default: "2" },
    "pending-timeout": { type: "string", default: "5m" },
    settle: { type: "string", default: "5" },
    "closed-loop": { type: "boolean", default: false },
  },
});
const sizes = loadSizes(flags, USAGE);
const SLEEP_S = Number(flags.sleep);
const SETTLE_S = Number(flags.settle);
if (!(SLEEP_S >= 0) || !(SETTLE_S >= 0)) {
  console.error(`--sleep and --settle must be numbers of seconds >= 0\n${USAGE}`);
  process.exit(2);
}
const PIPE = "load";
const FILE = "t";
// the workload, timed around it by the machine's clock as the container sees it
const SCRIPT = `read s _ < /proc/uptime; sleep ${SLEEP_S}; read e _ < /proc/uptime; echo "$s $e" > /out/${FILE}`;

const run = new BoundedRun(sizes.deadlineSeconds);
const runStart = performance.now();
let cp: ControlPlane | undefined;
let node: TestNode | undefined;
const services = new BenchServices(run, flags["log-level"]);
let exitCode = 1;

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

try {
  const versions = controlPlaneVersions();
  const bench = await startBenchControlPlane(
    run,
    (started) => {
      cp = started;
    },
    { auditLog: true },
  );
  log("starting the node (waits for another run's node to stop)");
  node = await startNode(bench.cp, { log: (m) => log(`node: ${m}`), signal: run.signal });
  const pids = { ...bench.pids, ...nodePids() };
  // the container runtime's share: not children of this process, one shim per pod
  const shims = new ProcessGroupCpu(
    (comm, cmd) => comm.startsWith("containerd-shim") && cmd().includes(node!.dir),
  );
  for (const p of Object.values(pids)) run.track(p);

  const scn = await newScenario("bench-pipe", { cp: bench.info });
  const ns = scn.namespace;
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "10m" });
  await setConfig(scn, "pipe-resolver-config", {
    ...nodeConfig(node),
    "pending-timeout": flags["pending-timeout"],
  });
  await grantOptInRules(scn, {
    service: "pipe-resolver",
    rulesKey: "pipeNamespaceRules",
    role: NAMESPACE_ROLE,
  });
  await bench.admin.create(
    pipeStrategies,
    pipeStrategy(ns, PIPE, scriptPod(node.toolsImage, SCRIPT), [], {
      outputs: configMapOutputs(`/out/${FILE}`),
    }),
  );
  await bench.admin.create(
    pipes,
    pipeObject(ns, PIPE, { kind: "PipeStrategy", name: PIPE }, [
      { file: `/out/${FILE}`, kind: "ConfigMap", key: FILE },
    ]),
  );
  const lc = await services.start(scn, "lifecycle-controller");
  const resolver = await services.start(scn, "pipe-resolver");

  // every pipe pod, warm-up and measured, from before the first request
  const timelines = new PodTimelines();
  const podWatch = startWatch(run.signal, (stop, listed) =>
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
    const rr = newRequest(ns, name, PIPE_LABELS, { pipe: PIPE });
    await createWithRetry(client, rr, clientStats, run.signal);
    s.created = performance.now();
  };
  const phase = await runPhase({
    name: "pipe",
    cp: bench.cp,
    namespace: ns,
    services: [lc.svc, resolver.svc],
    pids,
    concurrency: sizes.concurrency,
    warmup: sizes.warmup,
    requests: sizes.requests,
    signal: run.signal,
    send,
    closedLoop: flags["closed-loop"],
    resources: ["resolutionrequests", "pods", "configmaps", "secrets", "events"],
    settleMs: SETTLE_S * 1000,
  });
  const windowEnd = Date.now();
  shims.stop();
  const shimSeconds = round(shims.between(phase.batch.start, phase.batch.end), 2);
  await podWatch.stop();
  const controllers = {
    "lifecycle-controller": await lc.stats.final(),
    "pipe-resolver": await resolver.stats.final(),
  };
  run.finish();

  // ---- the figures ----
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
  const measuredPods = samples.flatMap((p) => (p.pod ? [p.pod] : []));
  const fromWall = performance.timeOrigin + phase.batch.start;
  const quarry = {
    [`system:serviceaccount:${ns}:quarry-pipe-resolver`]: "pipe-resolver",
    [`system:serviceaccount:${ns}:quarry-lifecycle-controller`]: "lifecycle-controller",
    "quarry-admin": "bench (creates, watches)",
  };
  const audit = callsByClient(readAudit(bench.cp.auditLog!, fromWall, windowEnd), (u) => clientOf(u, quarry));
  const result = {
    benchmark: "pipe-resolver",
    date: new Date().toISOString(),
    params: {
      requests: sizes.requests,
      concurrency: sizes.concurrency,
      warmup: sizes.warmup,
      closedLoop: flags["closed-loop"],
      sleepSeconds: SLEEP_S,
      pendingTimeout: flags["pending-timeout"],
      settleSeconds: SETTLE_S,
      logLevel: flags["log-level"],
      resolverWorkers: process.env.QUARRY_CONCURRENCY ?? "8 (default)",
    },
    aborted: run.signal.aborted ? String(run.signal.reason) : undefined,
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
      pending: stepView(phase, "pipe-resolver", "pipe", "pending", sizes.requests),
      succeeded: stepView(phase, "pipe-resolver", "pipe", "succeeded", sizes.requests),
      meanQueueWaitMs: meanQueueWaitMs(phase, "pipe-resolver", "pipe-resolver"),
    },
    wallSeconds: phase.wallSeconds,
    throughputPerSecond: phase.throughputPerSecond,
    apiCallsByClient: audit,
    apiCalls: phase.apiCalls,
    cpuSecondsMeasured: phase.cpu,
    backgroundCoresBefore: background,
    shimCpuSeconds: shimSeconds,
    controllers,
    warnings: { "lifecycle-controller": logWarnings(lc.svc), "pipe-resolver": logWarnings(resolver.svc) },
    client: { ...phase.client, retries: clientStats.retries },
    node: { startSeconds: round(node.startMs / 1000, 1) },
    machine: machineInfo(versions),
    setupSeconds: round((phase.batch.start - runStart) / 1000, 1),
  };
  console.log(`\n${pipeReport(result)}\n`);
  console.log(JSON.stringify(result));
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`);
  if (flags.samples) writeFileSync(flags.samples, SAMPLES_CSV_HEADER + samplesCsv(phase.batch, "pipe"));
  exitCode = phase.completed === sizes.requests && !result.aborted ? 0 : 1;
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 1;
} finally {
  run.finish();
  await services.stopAll();
  await node?.stop().catch((err: unknown) => log(`node stop: ${String(err)}`));
  await cp?.stop();
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
