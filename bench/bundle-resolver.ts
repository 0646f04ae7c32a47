// Benchmark: the bundle resolver through the real service. The fixture OCI
// registry with bundles pushed by the real `tkn bundle push`, a private control
// plane, and the real lifecycle-controller and bundle-resolver processes.
// Phases on one resolver process: cold (every request a bundle it never saw),
// tag-hot (one tag, resolved again per request), digest-hot (an immutable
// reference: the SDK's result cache answers). With the floor (default) the
// lifecycle floor runs first on the same control plane.
import { basename, dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { type AccessEntry, ociTools, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import { taskYaml } from "@quarry/harness/bundle-scenario";
import { newRequest, newScenario, setConfig } from "@quarry/harness/scenario";
import { errorMessage, type KubeClient } from "@quarry/kube";
import { loadFlags, once, type Phase, runBenchmark } from "./lib/benchmark.ts";
import { documentedFloor, runSameRunFloor } from "./lib/floor.ts";
import { type PhaseResult, runPhase } from "./lib/phase.ts";
import * as phaseReport from "./lib/phase-report.ts";
import { childPids, vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { controllerConcurrency, controlPlaneVersions, machineInfo, machineRows } from "./lib/report.ts";
import { createWithRetry, type Sample } from "./lib/requests.ts";
import { metricDelta, resolverView } from "./lib/resolver-view.ts";
import { log } from "./lib/run.ts";
import { logWarnings, MiB } from "./lib/service-stats.ts";
import { calls, type Row, round } from "./lib/stats.ts";

const PHASES = ["cold", "tag-hot", "digest-hot"] as const;
type PhaseName = (typeof PHASES)[number];
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

/** Pushes one bundle per item (`limit` at a time after the first, which uploads the shared config blob). */
async function pushAll(
  n: number,
  push: (i: number) => Promise<unknown>,
  limit: number,
  signal: AbortSignal,
): Promise<void> {
  if (n === 0) return;
  await push(0);
  let next = 1;
  const worker = async () => {
    while (next < n && !signal.aborted) await push(next++);
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (signal.aborted) throw new Error(`pushing bundles: ${errorMessage(signal.reason)}`);
}

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

/** A phase's result: the floor's, or a resolver phase's. */
interface Step {
  floor?: phaseReport.FloorRun;
  bundle?: BundlePhase;
}

const ending = phaseReport.floorThenPhases<Step>((steps) =>
  steps.flatMap((s) => (s.bundle ? [s.bundle] : [])),
);

await runBenchmark({
  name: "bundle-resolver",
  about:
    "The bundle resolver through the service: cold, tag-hot and digest-hot phases after the lifecycle floor.",
  deadline: 900,
  flags: {
    ...loadFlags(1000, "measured requests per phase (and distinct bundles pushed for cold)"),
    ...phaseReport.phaseFlags(PHASES),
    "closed-loop": {
      type: "boolean",
      help: "each client waits for its request to finish (with --concurrency 1: unloaded latency)",
    },
    "push-concurrency": {
      type: "int",
      default: 4,
      min: 1,
      help: "tkn bundle pushes at once while setting up",
    },
    "lifecycle-timeout": {
      type: "string",
      default: "10m",
      arg: "D",
      help: "the namespace's default-maximum-resolution-timeout",
    },
  },
  notes: "The services inherit this process's environment, e.g. QUARRY_CONCURRENCY (workers, default 8).",

  async setup(ctx) {
    const f = ctx.flags;
    const versions = { ...controlPlaneVersions(), ociTools: basename(dirname(ociTools().tkn)) };
    const reg = await startRegistry();
    ctx.defer(() => reg.dispose());
    const registryPid = childPids(process.pid, "registry")[0];
    ctx.run.track(registryPid);
    const pushStart = performance.now();
    const pushMs: number[] = [];
    const push = async (ref: string, name: string): Promise<string> => {
      const t0 = performance.now();
      const { digest } = await tknBundlePush(ref, [taskYaml(name, `echo ${name}`)]);
      pushMs.push(performance.now() - t0);
      return digest;
    };
    const coldCount = f.phases.includes("cold") ? f.requests : 0;
    log(`pushing ${coldCount + f.warmup + 1} bundles with tkn (${f["push-concurrency"]} at a time)`);
    const hotDigest = await push(reg.ref("bench/hot:v1"), "hot");
    await pushAll(
      f.warmup,
      (i) => push(reg.ref(`bench/warmup:w-${pad(i)}`), `warm-${pad(i)}`),
      f["push-concurrency"],
      ctx.signal,
    );
    await pushAll(
      coldCount,
      (i) => push(reg.ref(`bench/cold:c-${pad(i)}`), `cold-${pad(i)}`),
      f["push-concurrency"],
      ctx.signal,
    );
    const bundles = {
      registry: reg.host,
      pushed: pushMs.length,
      pushSeconds: round((performance.now() - pushStart) / 1000, 1),
      tknPushMeanMs: round(pushMs.reduce((a, b) => a + b, 0) / Math.max(1, pushMs.length), 1),
      pushConcurrency: f["push-concurrency"],
      hotDigest,
    };
    log(
      `pushed ${bundles.pushed} bundles in ${bundles.pushSeconds} s (tkn bundle push mean ${bundles.tknPushMeanMs} ms)`,
    );
    const plane = await ctx.controlPlane();
    const resolverUp = async () => {
      const scn = await newScenario("bench-bundle", { cp: plane.info });
      await setConfig(scn, "lifecycle-controller-config", {
        "default-maximum-resolution-timeout": f["lifecycle-timeout"],
      });
      return {
        scn,
        lc: await ctx.services.start(scn, "lifecycle-controller"),
        resolver: await ctx.services.start(scn, RESOLVER),
      };
    };
    return {
      versions,
      reg,
      registryPid,
      bundles,
      plane,
      resolverUp: once(resolverUp),
      clientStats: { retries: 0 },
    };
  },

  phases(ctx, { reg, registryPid, bundles, plane, resolverUp, clientStats }) {
    const f = ctx.flags;
    const n = f.requests;
    const sizes = {
      concurrency: f.concurrency,
      warmup: f.warmup,
      requests: n,
      signal: ctx.signal,
      closedLoop: f["closed-loop"],
    };
    const floor: Phase<Step> = {
      name: "floor",
      run: async () => ({
        floor: await runSameRunFloor({
          ...sizes,
          plane,
          services: ctx.services,
          clientStats,
        }),
      }),
    };
    const phase = (name: PhaseName): Phase<Step> => ({
      name,
      stop: (s) => (s.bundle?.phase.completed ?? 0) < n,
      run: async () => {
        const { scn, lc, resolver } = await resolverUp();
        const measured = {
          cold: (i: number) => ({ bundle: reg.ref(`bench/cold:c-${pad(i)}`), name: `cold-${pad(i)}` }),
          "tag-hot": () => ({ bundle: reg.ref("bench/hot:v1"), name: "hot" }),
          "digest-hot": () => ({ bundle: `${reg.host}/bench/hot@${bundles.hotDigest}`, name: "hot" }),
        }[name];
        const definition = {
          cold: `request i: bench/cold:c-<i>, ${n} distinct bundles never seen by the resolver`,
          "tag-hot": "every request: bench/hot:v1 (tag, cache mode auto: resolved per request)",
          "digest-hot": `every request: bench/hot@${bundles.hotDigest.slice(0, 19)}… (SDK result cache)`,
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
          const rr = newRequest(scn.namespace, reqName, { [LABEL_RESOLVER_TYPE]: TYPE }, params);
          await createWithRetry(client, rr, clientStats, ctx.signal);
          s.created = performance.now();
        };
        const p = await runPhase({
          ...sizes,
          name,
          cp: plane.cp,
          namespace: scn.namespace,
          services: [lc.svc, resolver.svc],
          pids: { ...plane.pids, registry: registryPid },
          send,
          resources: ["resolutionrequests", "serviceaccounts", "secrets", "events"],
        });
        const entries = windowOpen ? reg.accessLog() : [];
        const byKind: Record<string, number> = {};
        for (const e of entries) byKind[registryKind(e)] = (byKind[registryKind(e)] ?? 0) + 1;
        const digestCache: Record<string, number> = {};
        for (const what of ["manifest", "layer"])
          for (const result of ["hit", "miss"])
            digestCache[`${what} ${result}`] = metricDelta(p, RESOLVER, "quarry_bundle_cache_lookups_total", {
              what,
              result,
            });
        log(
          `${name}: p50 ${p.latencyMs.p50} ms, p99 ${p.latencyMs.p99} ms, ${p.throughputPerSecond} requests/s (${p.completed}/${n}); registry ${entries.length} requests`,
        );
        await phaseReport.deletePhaseRequests(plane.admin, scn.namespace, p, f.warmup, ctx.signal);
        return {
          bundle: {
            name,
            definition,
            phase: p,
            registry: { requests: entries.length, byKind, bytes: entries.reduce((a, e) => a + e.bytes, 0) },
            digestCache,
            digestCacheBytesAfter: promSum(
              p.services[RESOLVER]?.metricsAfter ?? "",
              "quarry_bundle_cache_bytes",
            ),
            resolverVmHwmMiB: MiB(vmKiB(resolver.svc.pid, "VmHWM")),
          },
        };
      },
    });
    return [...(f.floor ? [floor] : []), ...f.phases.map((name) => phase(name as PhaseName))];
  },

  async result(ctx, { versions, bundles, resolverUp }, steps) {
    const f = ctx.flags;
    const floor = steps.find((s) => s.floor)?.floor;
    const results = steps.flatMap((s) => (s.bundle ? [s.bundle] : []));
    const { lc, resolver } = await resolverUp();
    const documented = documentedFloor();
    return {
      benchmark: "bundle-resolver",
      date: new Date().toISOString(),
      params: {
        requests: f.requests,
        concurrency: f.concurrency,
        warmup: f.warmup,
        phases: f.phases,
        withFloor: f.floor,
        closedLoop: f["closed-loop"],
        lifecycleTimeout: f["lifecycle-timeout"],
        logLevel: f["log-level"],
        controllerConcurrency: controllerConcurrency(),
      },
      bundles,
      phases: results.map((r) => {
        const p = r.phase;
        const cpu = (name: string) => phaseReport.perRequest(p.cpu.processes[name] ?? 0, p);
        return {
          name: r.name,
          definition: r.definition,
          ...phaseReport.phaseJson(p, floor, documented),
          resolver: {
            ...resolverView(p, RESOLVER, TYPE),
            digestCache: r.digestCache,
            digestCacheBytesAfter: r.digestCacheBytesAfter,
            vmHwmAfterMiB: r.resolverVmHwmMiB,
          },
          registry: { ...r.registry, perRequest: round(r.registry.requests / Math.max(1, p.completed), 2) },
          cpuSecondsMeasured: p.cpu,
          cpuMsPerRequest: {
            resolver: cpu(RESOLVER),
            registry: cpu("registry"),
            lifecycleController: cpu("lifecycle-controller"),
            kubeApiserver: cpu("kube-apiserver"),
            all: phaseReport.perRequest(
              Object.values(p.cpu.processes).reduce((a, b) => a + b, 0) + p.cpu.benchDriver,
              p,
            ),
          },
        };
      }),
      controllers: {
        "lifecycle-controller": await lc.stats.final(),
        [RESOLVER]: await resolver.stats.final(),
      },
      resolverWarnings: logWarnings(resolver.svc),
      floor: phaseReport.floorJson(floor),
      documentedFloor: documented instanceof Error ? { error: documented.message } : documented,
      machine: machineInfo(versions),
      setupSeconds: round(((results[0]?.phase.batch.start ?? performance.now()) - ctx.startedAt) / 1000, 1),
    };
  },

  report(r, ctx, _s, steps) {
    const f = ctx.flags;
    const b = r.bundles;
    const rows: Row[] = [
      [
        "bundles",
        `${b.pushed} pushed with tkn bundle push in ${b.pushSeconds} s (mean ${b.tknPushMeanMs} ms each, ${b.pushConcurrency} at a time), registry ${b.registry}`,
      ],
      ["", ""],
    ];
    const results = steps.flatMap((s) => (s.bundle ? [s.bundle] : []));
    for (const [k, x] of results.entries()) {
      const p = x.phase;
      const j = r.phases[k]!;
      const c = j.cpuMsPerRequest;
      const cpu = (name: string): [string, number | undefined] => [name, p.cpu.processes[name]];
      rows.push(
        [x.name, x.definition],
        ...phaseReport.latencyRows(p, f.requests),
        phaseReport.resolverRow(j.resolver),
        [
          "  digest cache",
          `${calls(x.digestCache)}; ${round(x.digestCacheBytesAfter / 1024, 1)} KiB held after`,
        ],
        [
          "  registry",
          `${x.registry.requests} requests (${j.registry.perRequest}/request), ${round(x.registry.bytes / 1024, 1)} KiB served: ${calls(x.registry.byKind)}`,
        ],
        ["  wall time / throughput", `${p.wallSeconds} s, ${p.throughputPerSecond} requests/s`],
        ...phaseReport.timelineRows(p),
        ["  bundle-resolver memory", `VmHWM ${x.resolverVmHwmMiB} MiB after the phase`],
        phaseReport.processCpuRow(p, [
          cpu(RESOLVER),
          cpu("registry"),
          cpu("lifecycle-controller"),
          cpu("kube-apiserver"),
          cpu("etcd"),
        ]),
        [
          "  CPU ms per request",
          `resolver ${c.resolver}, registry ${c.registry}, lifecycle ${c.lifecycleController}, apiserver ${c.kubeApiserver}; all ${c.all}`,
        ],
        ...phaseReport.apiCallRows(p),
        phaseReport.clientRow(p),
        ...phaseReport.overFloorRows(j),
      );
    }
    return phaseReport.resolverRunReport({
      rows,
      floor: steps.find((s) => s.floor)?.floor,
      flags: f,
      resolver: RESOLVER,
      r,
      machine: machineRows(r.machine, `, ${r.machine.ociTools}`),
      phases: r.phases,
      columns: [
        ["registry requests", (j) => calls(j.registry.byKind)],
        [
          "CPU ms/request (resolver / registry / all)",
          ({ cpuMsPerRequest: c }) => `${c.resolver} / ${c.registry} / ${c.all}`,
        ],
      ],
    });
  },

  ok: (_r, ctx, _s, steps) => ending.ok(ctx.flags, steps),
  samples: (_s, steps) => ending.samples(steps),
});
