import { cpus } from "node:os";
import { basename, dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { buildBinaries, type ControlPlane } from "@quarry/devcluster/controlplane";
import {
  type AccessEntry,
  ociTools,
  type Registry,
  startRegistry,
  tknBundlePush,
} from "@quarry/devcluster/registry";
import { errorMessage, type KubeClient, settingsFromEnv } from "@quarry/kube";
import { taskYaml } from "../e2e/fixtures/bundle-scenario.ts";
import { newRequest, newScenario, setConfig } from "../e2e/harness/scenario.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { loadOptions, loadSizes, selectPhases } from "./lib/flags.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import {
  apiCallRows,
  emitResult,
  type FloorRun,
  floorJson,
  floorMarkdownRow,
  floorRows,
  latencyRows,
  overFloorRows,
  perRequest,
  phaseJson,
  serviceRows,
} from "./lib/phase-report.ts";
import { childPids, vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { calls, machineInfo, versionOf } from "./lib/report.ts";
import { createWithRetry, deleteRequests, type Sample } from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { BoundedRun, intFlag, log, sleep } from "./lib/run.ts";
import { BenchServices, logWarnings, MiB } from "./lib/service-stats.ts";
import { round, table } from "./lib/stats.ts";

const PHASES = ["cold", "tag-hot", "digest-hot"] as const;
type PhaseName = (typeof PHASES)[number];

const USAGE = `usage: node bench/bundle-resolver.ts [options]
  --requests N      measured requests per phase (default 1000); cold pushes N distinct bundles
  --concurrency N   in-flight clients creating requests (default 16)
  --phases LIST     comma-separated subset of ${PHASES.join(",")} (default all, always in that order)
  --warmup N        warm-up requests per phase (default 20; 0 disables): other bundles in cold,
                    the phase's own reference in the hot phases
  --no-floor        skip the same-run lifecycle floor (compare with docs/performance.md only)
  --closed-loop     each client waits for its request to finish before sending the next:
                    with --concurrency 1, the unloaded latency of each phase (also for the floor)
  --push-concurrency N  tkn bundle pushes at once while setting up (default 4)
  --lifecycle-timeout D  the bundle namespace's lifecycle-controller default-maximum-resolution-timeout
                    (default 10m, so a backlog is measured rather than cut off)
  --deadline S      the whole run stops after S seconds, torn down either way (default 900)
  --log-level L     the services' LOG_LEVEL (default info)
  --json FILE       also write the JSON result to FILE
  --samples FILE    write every measured request's timeline (ms since its phase's first create) as CSV
The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).`;

const { values: flags } = parseArgs({
  allowNegative: true,
  options: {
    ...loadOptions({ requests: "1000", deadline: "900" }),
    phases: { type: "string", default: PHASES.join(",") },
    floor: { type: "boolean", default: true },
    "closed-loop": { type: "boolean", default: false },
    "push-concurrency": { type: "string", default: "4" },
    "lifecycle-timeout": { type: "string", default: "10m" },
  },
});
const sizes = loadSizes(flags, USAGE);
const N = sizes.requests;
const CONCURRENCY = sizes.concurrency;
const WARMUP = sizes.warmup;
const DEADLINE_S = sizes.deadlineSeconds;
const PUSH_CONCURRENCY = intFlag("push-concurrency", flags["push-concurrency"], 1, USAGE);
const CLOSED_LOOP = flags["closed-loop"];
const phaseNames = selectPhases(flags.phases, PHASES, USAGE);

const pad = (i: number) => String(i).padStart(5, "0");
const TYPE = "bundles";
const RESOLVER = "bundle-resolver";

/** A registry request's kind: "HEAD manifest by tag", "GET blob", … (status appended unless 200). */
function registryKind(e: AccessEntry): string {
  const m = /^\/v2\/.+\/(manifests|blobs)\/([^/]+)$/.exec(e.path);
  let what = e.path === "/v2/" ? "/v2/ (ping)" : "other";
  if (m?.[1] === "blobs") what = "blob";
  else if (m) what = `manifest by ${m[2]!.startsWith("sha256:") ? "digest" : "tag"}`;
  return `${e.method} ${what}${e.status === 200 ? "" : ` ${e.status}`}`;
}

function registryRequests(entries: readonly AccessEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) {
    const k = registryKind(e);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Pushes one bundle per item (`limit` at a time after the first, which uploads the shared config blob). */
async function pushAll<T>(
  items: readonly T[],
  push: (item: T) => Promise<void>,
  limit: number,
  signal: AbortSignal,
): Promise<void> {
  if (items.length === 0) return;
  await push(items[0]!);
  let next = 1;
  const worker = async () => {
    while (next < items.length && !signal.aborted) await push(items[next++]!);
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (signal.aborted) throw new Error(`pushing bundles: ${errorMessage(signal.reason)}`);
}

// ---- the run ----

const run = new BoundedRun(DEADLINE_S);
const runStart = performance.now();
let cp: ControlPlane | undefined;
let registry: Registry | undefined;
const services = new BenchServices(run, flags["log-level"]);
let exitCode = 1;

interface BundlePhase {
  name: PhaseName;
  definition: string;
  phase: PhaseResult;
  registry: { requests: number; byKind: Record<string, number>; bytes: number };
  /** the resolver's digest cache: lookups by "manifest hit", "layer miss", … */
  digestCache: Record<string, number>;
  digestCacheBytesAfter: number;
  resolverVmHwmMiB: number;
}

try {
  const binDir = buildBinaries();
  const toolsDir = dirname(ociTools().tkn);
  const versions = {
    node: process.version,
    kubeApiserver: versionOf(join(binDir, "kube-apiserver"), ["--version"]),
    etcd: versionOf(join(binDir, "etcd"), ["--version"]),
    ociTools: basename(toolsDir),
  };

  // ---- the registry and its bundles ----
  const reg = await startRegistry();
  registry = reg;
  const registryPid = childPids(process.pid, "registry")[0];
  run.track(registryPid);
  const pushStart = performance.now();
  const pushMs: number[] = [];
  const push = async (ref: string, name: string): Promise<string> => {
    const t0 = performance.now();
    const { digest } = await tknBundlePush(ref, [taskYaml(name, `echo ${name}`)]);
    pushMs.push(performance.now() - t0);
    return digest;
  };
  const coldCount = phaseNames.includes("cold") ? N : 0;
  log(`pushing ${coldCount + WARMUP + 1} bundles with tkn (${PUSH_CONCURRENCY} at a time)`);
  const hotDigest = await push(reg.ref("bench/hot:v1"), "hot");
  const warmIdx = Array.from({ length: WARMUP }, (_, i) => i);
  await pushAll(
    warmIdx,
    (i) => push(reg.ref(`bench/warmup:w-${pad(i)}`), `warm-${pad(i)}`).then(() => {}),
    PUSH_CONCURRENCY,
    run.signal,
  );
  const coldIdx = Array.from({ length: coldCount }, (_, i) => i);
  await pushAll(
    coldIdx,
    (i) => push(reg.ref(`bench/cold:c-${pad(i)}`), `cold-${pad(i)}`).then(() => {}),
    PUSH_CONCURRENCY,
    run.signal,
  );
  const pushSeconds = round((performance.now() - pushStart) / 1000, 1);
  const pushMean = round(pushMs.reduce((a, b) => a + b, 0) / Math.max(1, pushMs.length), 1);
  log(`pushed ${pushMs.length} bundles in ${pushSeconds} s (tkn bundle push mean ${pushMean} ms)`);

  // ---- the control plane ----
  const {
    cp: plane,
    pids: cpPids,
    info,
    admin,
  } = await startBenchControlPlane(run, (started) => {
    cp = started;
  });
  const pids = { ...cpPids, registry: registryPid };
  const clientStats = { retries: 0 };

  // ---- optional: the floor, first, in its own namespace with its own lifecycle-controller ----
  let floor: FloorRun | undefined;
  if (flags.floor) {
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

  // ---- the bundle resolver ----
  const scn = await newScenario("bench-bundle", { cp: info });
  await setConfig(scn, "lifecycle-controller-config", {
    "default-maximum-resolution-timeout": flags["lifecycle-timeout"],
  });
  const lc = await services.start(scn, "lifecycle-controller");
  const resolver = await services.start(scn, RESOLVER);

  const results: BundlePhase[] = [];
  for (const name of phaseNames) {
    if (run.signal.aborted) break;
    const measured: (i: number) => { bundle: string; name: string } = {
      cold: (i: number) => ({ bundle: reg.ref(`bench/cold:c-${pad(i)}`), name: `cold-${pad(i)}` }),
      "tag-hot": () => ({ bundle: reg.ref("bench/hot:v1"), name: "hot" }),
      "digest-hot": () => ({ bundle: `${reg.host}/bench/hot@${hotDigest}`, name: "hot" }),
    }[name];
    const definition = {
      cold: `request i: bench/cold:c-<i>, ${N} distinct bundles never seen by the resolver`,
      "tag-hot": "every request: bench/hot:v1 (tag, cache mode auto: resolved per request)",
      "digest-hot": `every request: bench/hot@${hotDigest.slice(0, 19)}… (SDK result cache)`,
    }[name];
    let windowOpen = false;
    const send = async (client: KubeClient, reqName: string, i: number, s: Sample) => {
      const warm = reqName.startsWith("warm-");
      if (!warm && !windowOpen) {
        windowOpen = true;
        reg.clearLog();
      }
      const params =
        warm && name === "cold"
          ? { bundle: reg.ref(`bench/warmup:w-${pad(i)}`), name: `warm-${pad(i)}`, kind: "task" }
          : { ...measured(i), kind: "task" };
      await createWithRetry(
        client,
        newRequest(scn.namespace, reqName, { [LABEL_RESOLVER_TYPE]: TYPE }, params),
        clientStats,
        run.signal,
      );
      s.created = performance.now();
    };
    const phase = await runPhase({
      name,
      cp: plane,
      namespace: scn.namespace,
      services: [lc.svc, resolver.svc],
      pids,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      requests: N,
      signal: run.signal,
      send,
      closedLoop: CLOSED_LOOP,
      resources: ["resolutionrequests", "serviceaccounts", "secrets", "events"],
    });
    const entries = windowOpen ? reg.accessLog() : [];
    const digestCache: Record<string, number> = {};
    for (const what of ["manifest", "layer"]) {
      for (const result of ["hit", "miss"]) {
        digestCache[`${what} ${result}`] = metricDelta(phase, RESOLVER, "quarry_bundle_cache_lookups_total", {
          what,
          result,
        });
      }
    }
    results.push({
      name,
      definition,
      phase,
      registry: {
        requests: entries.length,
        byKind: registryRequests(entries),
        bytes: entries.reduce((a, e) => a + e.bytes, 0),
      },
      digestCache,
      digestCacheBytesAfter: promSum(
        phase.services[RESOLVER]?.metricsAfter ?? "",
        "quarry_bundle_cache_bytes",
      ),
      resolverVmHwmMiB: MiB(vmKiB(resolver.svc.pid, "VmHWM")),
    });
    log(
      `${name}: p50 ${phase.latencyMs.p50} ms, p99 ${phase.latencyMs.p99} ms, ${phase.throughputPerSecond} requests/s (${phase.completed}/${N}); registry ${entries.length} requests`,
    );
    await deleteRequests(
      admin,
      scn.namespace,
      [
        ...Array.from({ length: WARMUP }, (_, i) => `warm-${pad(i)}`),
        ...phase.batch.samples.map((s) => s.name),
      ],
      run.signal,
    );
    await sleep(1000);
    if (phase.completed < N) break;
  }
  const controllers = {
    "lifecycle-controller": await lc.stats.final(),
    [RESOLVER]: await resolver.stats.final(),
  };
  const resolverWarnings = logWarnings(resolver.svc);
  run.finish();

  // ---- report ----
  const documented = documentedFloor();
  const phasesJson = results.map((r) => {
    const p = r.phase;
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    return {
      name: r.name,
      definition: r.definition,
      ...phaseJson(p, floor, documented),
      resolver: {
        ...resolverView(p, RESOLVER, TYPE),
        digestCache: r.digestCache,
        digestCacheBytesAfter: r.digestCacheBytesAfter,
        vmHwmAfterMiB: r.resolverVmHwmMiB,
      },
      registry: { ...r.registry, perRequest: round(r.registry.requests / Math.max(1, p.completed), 2) },
      cpuSecondsMeasured: p.cpu,
      cpuMsPerRequest: {
        resolver: perRequest(p.cpu.processes[RESOLVER] ?? 0, p),
        registry: perRequest(p.cpu.processes.registry ?? 0, p),
        lifecycleController: perRequest(p.cpu.processes["lifecycle-controller"] ?? 0, p),
        kubeApiserver: perRequest(p.cpu.processes["kube-apiserver"] ?? 0, p),
        all: perRequest(sum(p.cpu.processes) + p.cpu.benchDriver, p),
      },
    };
  });
  const result = {
    benchmark: "bundle-resolver",
    date: new Date().toISOString(),
    params: {
      requests: N,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      phases: phaseNames,
      withFloor: flags.floor,
      closedLoop: CLOSED_LOOP,
      lifecycleTimeout: flags["lifecycle-timeout"],
      logLevel: flags["log-level"],
      controllerConcurrency: process.env.QUARRY_CONCURRENCY ?? `${settingsFromEnv({}).concurrency} (default)`,
    },
    bundles: {
      registry: reg.host,
      pushed: pushMs.length,
      pushSeconds,
      tknPushMeanMs: pushMean,
      pushConcurrency: PUSH_CONCURRENCY,
      hotDigest,
    },
    aborted: run.signal.aborted ? errorMessage(run.signal.reason) : undefined,
    phases: phasesJson,
    controllers,
    resolverWarnings,
    floor: floorJson(floor),
    documentedFloor: documented instanceof Error ? { error: documented.message } : documented,
    machine: machineInfo(versions),
    setupSeconds: round(((results[0]?.phase.batch.start ?? performance.now()) - runStart) / 1000, 1),
  };

  const rows: [string, string][] = [
    [
      "bundles",
      `${pushMs.length} pushed with tkn bundle push in ${pushSeconds} s (mean ${pushMean} ms each, ${PUSH_CONCURRENCY} at a time), registry ${reg.host}`,
    ],
    ["", ""],
  ];
  for (const [k, r] of results.entries()) {
    const p = r.phase;
    const j = phasesJson[k]!;
    const rv = j.resolver;
    const c = j.cpuMsPerRequest;
    rows.push(
      [r.name, r.definition],
      ...latencyRows(p, N),
      [
        "  resolver, in process",
        `picked up → outcome written: mean ${rv.meanMs} ms, p50 ≈ ${rv.p50Ms} ms, p90 ≈ ${rv.p90Ms} ms; outcomes ${JSON.stringify(rv.outcomes)}; SDK cache ${JSON.stringify(rv.cache)}`,
      ],
      [
        "  digest cache",
        `${calls(r.digestCache)}; ${round(r.digestCacheBytesAfter / 1024, 1)} KiB held after`,
      ],
      [
        "  registry",
        `${r.registry.requests} requests (${j.registry.perRequest}/request), ${round(r.registry.bytes / 1024, 1)} KiB served: ${calls(r.registry.byKind)}`,
      ],
      ["  wall time / throughput", `${p.wallSeconds} s, ${p.throughputPerSecond} requests/s`],
      [`  per ${p.timeline.windowMs} ms: created`, p.timeline.created.join(" ")],
      ["                 data seen", p.timeline.dataSeen.join(" ")],
      ["                 True seen", p.timeline.done.join(" ")],
      ["  bundle-resolver memory", `VmHWM ${r.resolverVmHwmMiB} MiB after the phase`],
      [
        "  CPU in measured phase",
        `bundle-resolver ${p.cpu.processes[RESOLVER]} s, registry ${p.cpu.processes.registry} s, lifecycle-controller ${p.cpu.processes["lifecycle-controller"]} s, kube-apiserver ${p.cpu.processes["kube-apiserver"]} s, etcd ${p.cpu.processes.etcd} s, driver ${p.cpu.benchDriver} s; machine ${p.cpu.machine} s of ${round(p.wallSeconds * cpus().length, 2)} s, foreign ${p.cpu.foreign} s`,
      ],
      [
        "  CPU ms per request",
        `resolver ${c.resolver}, registry ${c.registry}, lifecycle ${c.lifecycleController}, apiserver ${c.kubeApiserver}; all ${c.all}`,
      ],
      ...apiCallRows(p),
      ["  client", `${p.client.retries} retries, ${p.client.watchRestarts} watch restarts`],
    );
    rows.push(...overFloorRows(j));
  }
  rows.push(...floorRows(floor, N, CONCURRENCY, WARMUP));
  rows.push(
    ...serviceRows(RESOLVER, controllers, resolverWarnings),
    [
      "machine",
      `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memGiB} GiB, Node ${versions.node}, ${versions.ociTools}`,
    ],
    ["control plane", `${versions.kubeApiserver}, ${versions.etcd}`],
  );
  console.log(`\n${table(rows)}\n`);
  // one line per phase, markdown, for docs/performance.md
  console.log(
    "| phase | p50 ms | p90 ms | p99 ms | max ms | req/s | resolver in-process mean ms | over floor p50 ms | registry requests | CPU ms/request (resolver / registry / all) |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const line of floorMarkdownRow(floor, 10)) console.log(line);
  for (const j of phasesJson) {
    const l = j.latencyMs;
    const c = j.cpuMsPerRequest;
    console.log(
      `| ${j.name} | ${l.p50} | ${l.p90} | ${l.p99} | ${l.max} | ${j.throughputPerSecond} | ${j.resolver.meanMs} | ${j.overFloor.sameRun?.latencyMs.p50 ?? ""} | ${calls(j.registry.byKind)} | ${c.resolver} / ${c.registry} / ${c.all} |`,
    );
  }
  exitCode = emitResult(result, {
    json: flags.json,
    samples: flags.samples,
    floor,
    phases: results,
    expectedPhases: phaseNames.length,
    requests: N,
  });
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  exitCode = 1;
} finally {
  run.finish();
  await services.stopAll();
  await cp?.stop();
  await registry?.dispose();
  log(`torn down after ${round((performance.now() - runStart) / 1000, 1)} s`);
}
process.exit(exitCode);
