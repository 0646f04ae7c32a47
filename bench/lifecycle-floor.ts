// Benchmark: the lifecycle controller's "API floor". A private control plane
// (etcd + kube-apiserver on loopback), the real lifecycle-controller process
// with its shipped RBAC, and N ResolutionRequests whose creator writes
// status.data itself right after creating each one (the client plays an
// instant resolver). Latency = Succeeded=True seen on a watch − just before
// the create was sent. No resolver does any work, so this is the least time
// any resolution can take through Quarry on this machine: the floor that
// resolver benchmarks are compared against.
//
//   node bench/lifecycle-floor.ts [--requests 500] [--concurrency 16] [--json out.json]
//
// With --ttl (the controller's completed-request-ttl) it also shows whether completed requests
// pile up: the controller's RSS at the end of the batch and once the ttl has passed again, and
// how many requests are left in the namespace.
//
// With --rate R the requests are sent open loop at R per second, spread evenly (not as fast as
// the clients go): with --ttl, a long run at a rate the machine sustains shows whether the
// controller's memory is flat once the ttl deletes requests as fast as they arrive. Its RSS is
// sampled every second throughout; the report gives RSS and the requests in the namespace at
// 10, 25, 50, 75 and 100 % of the requests sent, and the RSS slope over the second half and last quarter.
//
//   node bench/lifecycle-floor.ts --requests 10000 --rate 40 --ttl 30s --deadline 900
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { LABEL_RESOLVER_TYPE, resolutionRequests } from "@quarry/api";
import { buildBinaries, type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi } from "@quarry/devcluster/install";
import type { RunningService } from "@quarry/devcluster/service";
import {
  errorMessage,
  isApiError,
  type KubeClient,
  parseDuration,
  RestKubeClient,
  settingsFromEnv,
} from "@quarry/kube";
import { adminClient } from "../e2e/harness/env.ts";
import { newRequest, newScenario, type Scenario, setLifecycleConfig } from "../e2e/harness/scenario.ts";
import { diffCounts, requestCounts } from "./lib/apiserver.ts";
import { loadOptions, loadSizes } from "./lib/flags.ts";
import { childPids, cpuSeconds, machineBusySeconds, RssSampler, vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { machineInfo, versionOf } from "./lib/report.ts";
import { logCounts, type Sample, Tracker, watchRequests, withRetry } from "./lib/requests.ts";
import { RssSeries } from "./lib/rss-series.ts";
import { intFlag, log, sleep } from "./lib/run.ts";
import { round, roundSummary, type Summary, summarize, table } from "./lib/stats.ts";

const USAGE = `usage: node bench/lifecycle-floor.ts [options]
  --requests N      measured requests (default 500)
  --concurrency N   in-flight clients creating requests (default 16)
  --warmup N        requests sent and discarded before measuring (default 20; 0 disables)
  --deadline S      the whole run stops after S seconds, torn down either way (default 300)
  --log-level L     the controller's LOG_LEVEL (default info, the service's own default)
  --json FILE       also write the JSON result to FILE
  --samples FILE    write every measured request's timeline (ms since the first create) as CSV
  --ttl D           the controller's completed-request-ttl (Go duration; default 0 = never delete)
  --rate R          send R requests/s open loop, spread evenly, each on the next client in turn
                    (default 0 = closed loop: each client sends its next once its last is written)
  --max-in-flight N with --rate: hold the next request back while N are being created and written
                    (default 500), so an overloaded machine slows the run down instead of piling up
                    retries in this process; the time held back is reported
The controller inherits this process's environment, e.g. QUARRY_CONCURRENCY (workers).`;

const { values: flags } = parseArgs({
  options: {
    ...loadOptions({ requests: "500", deadline: "300" }),
    ttl: { type: "string", default: "0" },
    rate: { type: "string", default: "0" },
    "max-in-flight": { type: "string", default: "500" },
  },
});
const sizes = loadSizes(flags, USAGE);
const N = sizes.requests;
const CONCURRENCY = sizes.concurrency;
const WARMUP = sizes.warmup;
const DEADLINE_S = sizes.deadlineSeconds;
const LOG_LEVEL = flags["log-level"];
const TTL = flags.ttl;
const TTL_MS = TTL === "0" ? 0 : parseDuration(TTL);
const RATE = intFlag("rate", flags.rate, 0, USAGE);
const MAX_IN_FLIGHT = intFlag("max-in-flight", flags["max-in-flight"], 1, USAGE);
/** fractions of the measured requests sent at which the controller's RSS and the namespace are read */
const CHECKPOINTS = [0.1, 0.25, 0.5, 0.75, 1];

const DATA = Buffer.from(
  "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\nspec:\n  steps:\n    - name: echo\n      image: alpine\n      script: echo hello\n",
).toString("base64");

// ---- bounded run: a global deadline, signals, and a last-resort kill of what we started ----

const run = new AbortController();
const startedPids = new Set<number>();
const deadlineTimer = setTimeout(
  () => run.abort(new Error(`global deadline of ${DEADLINE_S}s reached`)),
  DEADLINE_S * 1000,
);
// If teardown itself hangs, kill the processes this run started (by pid) and exit.
const hardStop = () => {
  for (const pid of startedPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  process.exit(3);
};
setTimeout(hardStop, (DEADLINE_S + 60) * 1000).unref();
let signals = 0;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    if (++signals > 1) hardStop();
    log(`${sig}: stopping`);
    run.abort(new Error(`interrupted by ${sig}`));
  });
}

// ---- per-request timeline (performance.now(), ms) ----

interface BatchResult {
  samples: Sample[];
  start: number;
  end: number;
  /** open loop (--rate): when the last request was sent, the most in flight at once, the latest send */
  paced?: { sentSeconds: number; maxInFlight: number; maxLagMs: number; heldBackSeconds: number };
}

/** Called when request number `sent` (1-based) has been sent; open loop only. */
type OnSent = (sent: number) => void;

/** Creates `n` requests and waits until all are Succeeded (or the run stops): closed loop from `clients`, or open loop at RATE. */
async function runBatch(
  clients: readonly KubeClient[],
  namespace: string,
  prefix: string,
  n: number,
  tracker: Tracker,
  stats: { retries: number },
  onSent?: OnSent,
): Promise<BatchResult> {
  const samples: Sample[] = [];
  const start = performance.now();
  const one = async (client: KubeClient, i: number) => {
    const name = `${prefix}-${String(i).padStart(5, "0")}`;
    const s: Sample = { name, t0: performance.now() };
    tracker.track(s);
    samples.push(s);
    try {
      await withRetry(
        () =>
          client.create(resolutionRequests, newRequest(namespace, name, { [LABEL_RESOLVER_TYPE]: "git" })),
        stats,
        run.signal,
        (err) => isApiError(err, 409), // an earlier attempt did create it
      );
      s.created = performance.now();
      // the client plays the resolver: it writes the data itself
      await withRetry(
        () => client.mergePatch(resolutionRequests, namespace, name, { status: { data: DATA } }, "status"),
        stats,
        run.signal,
      );
      s.patched = performance.now();
    } catch (err) {
      tracker.fail(s, `client: ${errorMessage(err)}`);
    }
  };
  let paced: BatchResult["paced"];
  if (RATE > 0) {
    // open loop: request i leaves at start + i/RATE whatever the earlier ones are doing
    const inFlight = new Set<Promise<void>>();
    let maxInFlight = 0;
    let maxLagMs = 0;
    let heldBackMs = 0;
    for (let i = 0; i < n && !run.signal.aborted; i++) {
      if (inFlight.size >= MAX_IN_FLIGHT) {
        const held = performance.now();
        while (inFlight.size >= MAX_IN_FLIGHT && !run.signal.aborted) await Promise.race(inFlight);
        heldBackMs += performance.now() - held;
      }
      // after a hold the schedule restarts from now: the run is late, not a burst to catch up
      const due = start + heldBackMs + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      maxLagMs = Math.max(maxLagMs, performance.now() - due);
      const p = one(clients[i % clients.length]!, i).finally(() => inFlight.delete(p));
      inFlight.add(p);
      maxInFlight = Math.max(maxInFlight, inFlight.size);
      onSent?.(i + 1);
    }
    paced = {
      sentSeconds: round((performance.now() - start) / 1000, 1),
      maxInFlight,
      maxLagMs: round(maxLagMs, 1),
      heldBackSeconds: round(heldBackMs / 1000, 1),
    };
    await Promise.all(inFlight);
  } else {
    let next = 0;
    const worker = async (client: KubeClient) => {
      for (;;) {
        if (run.signal.aborted) return;
        const i = next++;
        if (i >= n) return;
        onSent?.(i + 1);
        await one(client, i);
      }
    };
    await Promise.all(clients.map(worker));
  }
  await tracker.settled(samples, run.signal);
  const ends = samples.flatMap((s) => (s.done !== undefined ? [s.done] : []));
  return { samples, start, end: ends.length ? Math.max(...ends) : performance.now(), paced };
}

/** The requests in `namespace` without listing them all: one item and the apiserver's remainingItemCount. */
async function requestsIn(client: KubeClient, namespace: string): Promise<number> {
  const page = await client.list(resolutionRequests, namespace, { limit: 1 });
  const remaining = (page.metadata as { remainingItemCount?: number }).remainingItemCount;
  if (remaining !== undefined) return page.items.length + remaining;
  if (!page.metadata.continue) return page.items.length;
  return (await client.list(resolutionRequests, namespace)).items.length;
}

function samplesCsv(batch: BatchResult): string {
  const rel = (t: number | undefined) => (t === undefined ? "" : (t - batch.start).toFixed(1));
  const rows = batch.samples.map((s) =>
    [
      s.name,
      rel(s.t0),
      rel(s.created),
      rel(s.patched),
      rel(s.inProgress),
      rel(s.done),
      JSON.stringify(s.failed ?? ""),
    ].join(","),
  );
  return `name,t0,created,patched,inProgressSeen,succeededSeen,failed\n${rows.join("\n")}\n`;
}

const MiB = (kib: number | undefined) => (kib === undefined ? Number.NaN : round(kib / 1024, 1));
const ms = (s: Summary) => `p50 ${s.p50}  p90 ${s.p90}  p99 ${s.p99}  max ${s.max}  (n=${s.count})`;

// ---- the run ----

const runStart = performance.now();
let cp: ControlPlane | undefined;
let scn: Scenario | undefined;
let svc: RunningService | undefined;
let sampler: RssSampler | undefined;
let series: RssSeries | undefined;
let exitCode = 1;
const watchStop = new AbortController();
run.signal.addEventListener("abort", () => watchStop.abort());
let watchLoop: Promise<void> | undefined;

try {
  const binDir = buildBinaries();
  const versions = {
    node: process.version,
    kubeApiserver: versionOf(join(binDir, "kube-apiserver"), ["--version"]),
    etcd: versionOf(join(binDir, "etcd"), ["--version"]),
  };
  cp = await startControlPlane({ log: (m) => log(`controlplane: ${m}`) });
  const cpPids = {
    apiserver: childPids(process.pid, "kube-apiserver")[0],
    etcd: childPids(process.pid, "etcd")[0],
  };
  for (const pid of Object.values(cpPids)) if (pid) startedPids.add(pid);
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  await installQuarryApi(adminClient(info));
  scn = await newScenario("bench-lc", { cp: info });
  await setLifecycleConfig(scn, { "completed-request-ttl": TTL });
  svc = await scn.start("lifecycle-controller", { LOG_LEVEL });
  startedPids.add(svc.pid);
  const controllerPid = svc.pid;
  sampler = new RssSampler(controllerPid, 200);
  series = new RssSeries(controllerPid, 1000);
  log(`lifecycle-controller ready (pid ${controllerPid}) in namespace ${scn.namespace}`);
  const ready = { rssKiB: vmKiB(controllerPid, "VmRSS"), cpu: cpuSeconds(controllerPid) ?? 0 };

  const tracker = new Tracker();
  const watchStats = { restarts: 0 };
  watchLoop = watchRequests(
    RestKubeClient.fromEnvironment(cp.adminKubeconfig),
    scn.namespace,
    tracker,
    watchStop.signal,
    watchStats,
  );
  const clients = Array.from({ length: CONCURRENCY }, () =>
    RestKubeClient.fromEnvironment(cp!.adminKubeconfig),
  );
  const clientStats = { retries: 0 };

  if (WARMUP > 0) {
    log(`warm-up: ${WARMUP} requests`);
    const warm = await runBatch(clients, scn.namespace, "warm", WARMUP, tracker, clientStats);
    const ok = warm.samples.filter((s) => s.done !== undefined).length;
    if (ok < WARMUP) throw new Error(`warm-up: only ${ok}/${WARMUP} requests succeeded`);
  }

  const before = {
    controller: cpuSeconds(controllerPid) ?? 0,
    apiserver: cpPids.apiserver ? (cpuSeconds(cpPids.apiserver) ?? 0) : 0,
    etcd: cpPids.etcd ? (cpuSeconds(cpPids.etcd) ?? 0) : 0,
    driver: process.cpuUsage(),
    machine: machineBusySeconds(),
    logs: logCounts(svc.logFile),
    api: await requestCounts(cp, "resolutionrequests"),
  };
  log(`measuring: ${N} requests, ${RATE > 0 ? `${RATE}/s open loop over` : ""} ${CONCURRENCY} clients`);
  const countLeft = () => requestsIn(clients[0]!, scn!.namespace);
  const heapUsed = async () => {
    const r = await svc!.ops("/metrics");
    return r.status === 200 ? promSum(r.body, "nodejs_heap_size_used_bytes") : Number.NaN;
  };
  const checkpointAt = new Map(CHECKPOINTS.map((f) => [Math.max(1, Math.ceil(f * N)), f]));
  const checkpointsTaken: Promise<unknown>[] = [];
  const onSent: OnSent = (sent) => {
    const f = checkpointAt.get(sent);
    if (f !== undefined)
      checkpointsTaken.push(series!.checkpoint(`${round(f * 100, 0)} % sent`, countLeft, heapUsed));
  };
  const batch = await runBatch(clients, scn.namespace, "req", N, tracker, clientStats, onSent);
  await Promise.all(checkpointsTaken);
  await series.checkpoint("all Succeeded", countLeft, heapUsed);
  const driverCpu = process.cpuUsage(before.driver);
  const after = {
    machine: machineBusySeconds(),
    controller: cpuSeconds(controllerPid) ?? 0,
    apiserver: cpPids.apiserver ? (cpuSeconds(cpPids.apiserver) ?? 0) : 0,
    etcd: cpPids.etcd ? (cpuSeconds(cpPids.etcd) ?? 0) : 0,
    logs: logCounts(svc.logFile),
    api: await requestCounts(cp, "resolutionrequests").catch(() => new Map<string, number>()),
  };
  const rssAtEndKiB = vmKiB(controllerPid, "VmRSS");
  const leftAtEnd = (await clients[0]!.list(resolutionRequests, scn.namespace)).items.length;
  // with a ttl: wait it out again (plus the controller's pass), then see what is left
  let settled: { rssMiB: number; requestsLeft: number; afterSeconds: number } | undefined;
  if (TTL_MS > 0) {
    const waitMs = TTL_MS + 5_000;
    log(`waiting ${waitMs / 1000} s for completed requests past their ttl to go`);
    await sleep(waitMs);
    settled = {
      rssMiB: MiB(vmKiB(controllerPid, "VmRSS")),
      requestsLeft: (await clients[0]!.list(resolutionRequests, scn.namespace)).items.length,
      afterSeconds: round(waitMs / 1000, 1),
    };
    await series.checkpoint(`ttl + 5 s later`, countLeft, heapUsed);
  }
  series.stop();
  const sentAt = (pct: number) =>
    series!.checkpoints.find((c) => c.label === `${pct} % sent`)?.t ?? Number.NaN;
  const rssSeries = {
    intervalSeconds: 1,
    checkpoints: series.checkpoints,
    // RSS growth while the second half of the requests was sent: ~0 when flat at this rate
    slopeSecondHalfKiBPerSecond: series.slopeKiBPerSecond(sentAt(50), sentAt(100)),
    slopeSecondHalfKiBPerRequest:
      RATE > 0 ? round(series.slopeKiBPerSecond(sentAt(50), sentAt(100)) / RATE, 2) : undefined,
    // the same over the last quarter: V8 grows its heap in steps, so a half can hold one step and still end flat
    slopeLastQuarterKiBPerSecond: series.slopeKiBPerSecond(sentAt(75), sentAt(100)),
    points: series.points,
  };
  // peak RSS and CPU just before stopping the controller
  sampler.sample();
  sampler.stop();
  const hwmKiB = vmKiB(controllerPid, "VmHWM");
  const controllerCpuTotal = cpuSeconds(controllerPid) ?? Number.NaN;
  const alive = (await Promise.race([svc.exited.then(() => false), sleep(0).then(() => true)])) as boolean;

  const done = batch.samples.filter((s) => s.done !== undefined);
  const failed = batch.samples.filter((s) => s.failed !== undefined && s.done === undefined);
  const latency = summarize(done.map((s) => s.done! - s.t0));
  const wallS = (batch.end - batch.start) / 1000;
  const breakdown = {
    createMs: roundSummary(summarize(done.flatMap((s) => (s.created ? [s.created - s.t0] : [])))),
    statusWriteMs: roundSummary(
      summarize(done.flatMap((s) => (s.created && s.patched ? [s.patched - s.created] : []))),
    ),
    inProgressSeenMs: roundSummary(
      summarize(done.flatMap((s) => (s.inProgress !== undefined ? [s.inProgress - s.t0] : []))),
    ),
    dataWrittenToSucceededMs: roundSummary(
      summarize(done.flatMap((s) => (s.patched ? [s.done! - s.patched] : []))),
    ),
  };
  const ownCpu = {
    controller: after.controller - before.controller,
    apiserver: after.apiserver - before.apiserver,
    etcd: after.etcd - before.etcd,
    driver: (driverCpu.user + driverCpu.system) / 1e6,
  };
  const machineCpu = after.machine - before.machine;
  const delta = (k: string) => (after.logs[k] ?? 0) - (before.logs[k] ?? 0);
  const result = {
    benchmark: "lifecycle-floor",
    date: new Date().toISOString(),
    params: {
      requests: N,
      concurrency: CONCURRENCY,
      rate: RATE > 0 ? RATE : undefined,
      warmup: WARMUP,
      controllerLogLevel: LOG_LEVEL,
      controllerConcurrency: process.env.QUARRY_CONCURRENCY ?? `${settingsFromEnv({}).concurrency} (default)`,
    },
    completed: done.length,
    failed: failed.length,
    incomplete: N - done.length - failed.length,
    aborted: run.signal.aborted ? errorMessage(run.signal.reason) : undefined,
    latencyMs: roundSummary(latency),
    wallSeconds: round(wallS, 2),
    throughputPerSecond: round(done.length / wallS, 1),
    paced: batch.paced,
    breakdown,
    notSeenInProgress: done.filter((s) => s.inProgress === undefined).length,
    controller: {
      pid: controllerPid,
      aliveAtEnd: alive,
      peakRssMiB: MiB(hwmKiB),
      sampledMaxRssMiB: MiB(sampler.maxKiB),
      rssSamples: sampler.samples,
      rssAtReadyMiB: MiB(ready.rssKiB),
      rssAtEndMiB: MiB(rssAtEndKiB),
      requestsLeftAtEnd: leftAtEnd,
      completedRequestTtl: TTL,
      afterTtl: settled,
      rssSeries,
      cpuSeconds: round(controllerCpuTotal, 2),
      cpuSecondsMeasured: round(after.controller - before.controller, 2),
      cpuSecondsStartup: round(ready.cpu, 2),
      statusWrites: delta("request condition updated"),
      reconcileRetries: delta("reconcile failed, retrying"),
    },
    otherCpuSecondsMeasured: {
      kubeApiserver: round(ownCpu.apiserver, 2),
      etcd: round(ownCpu.etcd, 2),
      benchDriver: round(ownCpu.driver, 2),
      // the whole machine's busy CPU in the measured phase, and what none of this run's processes used
      // (other workloads on the machine: large values mean a noisy run)
      machine: round(machineCpu, 2),
      foreign: round(machineCpu - ownCpu.controller - ownCpu.apiserver - ownCpu.etcd - ownCpu.driver, 2),
    },
    // every ResolutionRequest call the apiserver served in the measured phase (bench + controller)
    apiCalls: diffCounts(before.api, after.api),
    client: { retries: clientStats.retries, watchRestarts: watchStats.restarts },
    machine: machineInfo(versions),
    setupSeconds: round((batch.start - runStart) / 1000, 1),
  };

  const lat = result.latencyMs;
  console.log(
    [
      "",
      `lifecycle-controller API floor: ${N} requests, ${RATE > 0 ? `${RATE}/s open loop over ` : ""}${CONCURRENCY} clients (warm-up ${WARMUP})`,
      table([
        ["completed", `${result.completed}/${N} (failed ${result.failed}, incomplete ${result.incomplete})`],
        ["latency ms", ms(lat)],
        ["  create", ms(breakdown.createMs)],
        ["  status.data write", ms(breakdown.statusWriteMs)],
        ["  data written → True", ms(breakdown.dataWrittenToSucceededMs)],
        ["  InProgress seen", `${ms(breakdown.inProgressSeenMs)}; never seen ${result.notSeenInProgress}`],
        ["wall time", `${result.wallSeconds} s`],
        ["throughput", `${result.throughputPerSecond} requests/s`],
        ...(batch.paced
          ? [
              [
                "open loop",
                `${RATE}/s: all sent in ${batch.paced.sentSeconds} s (${round(N / batch.paced.sentSeconds, 1)}/s), at most ${batch.paced.maxInFlight} in flight (held back ${batch.paced.heldBackSeconds} s at ${MAX_IN_FLIGHT}), latest send ${batch.paced.maxLagMs} ms behind`,
              ] as [string, string],
            ]
          : []),
        [
          "controller RSS over the run",
          series.checkpoints
            .map(
              (c) =>
                `${c.label} (${c.t} s): ${c.rssMiB} MiB (heap used ${c.heapUsedMiB ?? "?"}), ${c.count ?? "?"} requests`,
            )
            .join("; "),
        ],
        [
          "  RSS slope, 50→100 % sent",
          `${rssSeries.slopeSecondHalfKiBPerSecond} KiB/s${rssSeries.slopeSecondHalfKiBPerRequest !== undefined ? ` (${rssSeries.slopeSecondHalfKiBPerRequest} KiB per request sent)` : ""}; 75→100 %: ${rssSeries.slopeLastQuarterKiBPerSecond} KiB/s`,
        ],
        [
          "controller RSS",
          `peak (VmHWM) ${result.controller.peakRssMiB} MiB; sampled max ${result.controller.sampledMaxRssMiB} MiB; at ready ${result.controller.rssAtReadyMiB} MiB`,
        ],
        [
          "requests kept",
          `ttl ${TTL}: ${leftAtEnd} left at the end (RSS ${result.controller.rssAtEndMiB} MiB)${settled ? `; ${settled.requestsLeft} left ${settled.afterSeconds} s later (RSS ${settled.rssMiB} MiB)` : ""}`,
        ],
        [
          "controller CPU",
          `${result.controller.cpuSeconds} s total (startup ${result.controller.cpuSecondsStartup} s, measured phase ${result.controller.cpuSecondsMeasured} s)`,
        ],
        [
          "controller writes",
          `${result.controller.statusWrites} status writes (${round(result.controller.statusWrites / N, 2)}/request), ${result.controller.reconcileRetries} reconcile retries`,
        ],
        [
          "other CPU (measured)",
          `kube-apiserver ${result.otherCpuSecondsMeasured.kubeApiserver} s, etcd ${result.otherCpuSecondsMeasured.etcd} s, bench driver ${result.otherCpuSecondsMeasured.benchDriver} s; machine ${result.otherCpuSecondsMeasured.machine} s of ${round(wallS * result.machine.cpus, 2)} s available, foreign ${result.otherCpuSecondsMeasured.foreign} s`,
        ],
        [
          "RR API calls (all)",
          Object.entries(result.apiCalls)
            .map(([k, v]) => `${k}: ${v}`)
            .join(", "),
        ],
        ["client", `${clientStats.retries} retries, ${watchStats.restarts} watch restarts`],
        [
          "machine",
          `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}`,
        ],
        ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
      ]),
      "",
    ].join("\n"),
  );
  console.log(JSON.stringify(result));
  if (flags.samples) writeFileSync(flags.samples, samplesCsv(batch));
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`);
  exitCode = result.completed === N ? 0 : 1;
  if (result.aborted) log(`run stopped early: ${result.aborted}`);
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 1;
} finally {
  clearTimeout(deadlineTimer);
  sampler?.stop();
  series?.stop();
  watchStop.abort();
  await watchLoop?.catch(() => {});
  if (svc) {
    const s = svc;
    const stopped = await Promise.race([s.stop().then(() => true), sleep(30_000).then(() => false)]);
    if (!stopped) s.kill("SIGKILL");
  }
  // the control plane goes away with the namespace in it; scenario cleanup is not needed
  await cp?.stop();
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
