// Benchmark: the bundle resolver through the real service, a resolver burst
// (lib/burst.ts). The fixture OCI registry with bundles pushed by the real
// `tkn bundle push`; phases on one resolver process: cold (every request a
// bundle it never saw), tag-hot (one tag, resolved again per request),
// digest-hot (an immutable reference: the SDK's result cache answers).
import { basename, dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { type AccessEntry, ociTools, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import { taskYaml } from "@quarry/harness/bundle-scenario";
import { newRequest, setConfig } from "@quarry/harness/scenario";
import { errorMessage } from "@quarry/kube";
import { loadFlags, runBenchmark } from "./lib/benchmark.ts";
import { cpuMsPerRequest, phaseFlags, resolverBurst } from "./lib/burst.ts";
import { childPids, vmKiB } from "./lib/proc.ts";
import { promSum } from "./lib/prom.ts";
import { metricDelta } from "./lib/resolver-view.ts";
import { log } from "./lib/run.ts";
import { MiB } from "./lib/service-stats.ts";
import { calls, round } from "./lib/stats.ts";

const PHASES = ["cold", "tag-hot", "digest-hot"] as const;
const pad = (i: number) => String(i).padStart(5, "0");
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
async function pushAll(n: number, push: (i: number) => Promise<unknown>, limit: number, signal: AbortSignal) {
  if (n === 0) return;
  await push(0);
  let next = 1;
  const worker = async () => {
    while (next < n && !signal.aborted) await push(next++);
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (signal.aborted) throw new Error(`pushing bundles: ${errorMessage(signal.reason)}`);
}

await runBenchmark(
  resolverBurst({
    name: "bundle-resolver",
    about:
      "The bundle resolver through the service: cold, tag-hot and digest-hot phases after the lifecycle floor.",
    deadline: 900,
    flags: {
      ...loadFlags(1000, "measured requests per phase (and distinct bundles pushed for cold)"),
      ...phaseFlags(PHASES),
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
    resolver: RESOLVER,
    type: "bundles",
    namespace: "bench-bundle",
    resources: ["resolutionrequests", "serviceaccounts", "secrets", "events"],
    phaseNames: (f) => f.phases,
    withFloor: (f) => f.floor,
    versions: () => ({ ociTools: basename(dirname(ociTools().tkn)) }),

    async setup(ctx) {
      const f = ctx.flags;
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
      const limit = f["push-concurrency"];
      log(`pushing ${coldCount + f.warmup + 1} bundles with tkn (${limit} at a time)`);
      const hotDigest = await push(reg.ref("bench/hot:v1"), "hot");
      const pushSet = (set: string, name: string, n: number) =>
        pushAll(n, (i) => push(reg.ref(`bench/${set}-${pad(i)}`), `${name}-${pad(i)}`), limit, ctx.signal);
      await pushSet("warmup:w", "warm", f.warmup);
      await pushSet("cold:c", "cold", coldCount);
      const bundles = {
        registry: reg.host,
        pushed: pushMs.length,
        pushSeconds: round((performance.now() - pushStart) / 1000, 1),
        tknPushMeanMs: round(pushMs.reduce((a, b) => a + b, 0) / Math.max(1, pushMs.length), 1),
        pushConcurrency: limit,
        hotDigest,
      };
      log(
        `pushed ${bundles.pushed} bundles in ${bundles.pushSeconds} s (tkn bundle push mean ${bundles.tknPushMeanMs} ms)`,
      );
      return { reg, registryPid, bundles };
    },
    configure: (scn, _s, ctx) =>
      setConfig(scn, "lifecycle-controller-config", {
        "default-maximum-resolution-timeout": ctx.flags["lifecycle-timeout"],
      }),
    pids: (s) => ({ registry: s.registryPid }),

    plan(ctx, { reg, bundles }, name, { resolver }) {
      const n = ctx.flags.requests;
      const hot = bundles.hotDigest;
      const phase = {
        cold: {
          definition: `request i: bench/cold:c-<i>, ${n} distinct bundles never seen by the resolver`,
          params: (i: number) => ({ bundle: reg.ref(`bench/cold:c-${pad(i)}`), name: `cold-${pad(i)}` }),
        },
        "tag-hot": {
          definition: "every request: bench/hot:v1 (tag, cache mode auto: resolved per request)",
          params: () => ({ bundle: reg.ref("bench/hot:v1"), name: "hot" }),
        },
        "digest-hot": {
          definition: `every request: bench/hot@${hot.slice(0, 19)}… (SDK result cache)`,
          params: () => ({ bundle: `${reg.host}/bench/hot@${hot}`, name: "hot" }),
        },
      }[name as (typeof PHASES)[number]];
      let opened = false;
      return {
        definition: phase.definition,
        request: (ns, reqName, i, warm) => {
          const params =
            warm && name === "cold"
              ? { bundle: reg.ref(`bench/warmup:w-${pad(i)}`), name: `warm-${pad(i)}` }
              : phase.params(i);
          return newRequest(ns, reqName, { [LABEL_RESOLVER_TYPE]: "bundles" }, { ...params, kind: "task" });
        },
        open: () => {
          opened = true;
          reg.clearLog();
        },
        close: (p) => {
          const entries = opened ? reg.accessLog() : [];
          const byKind: Record<string, number> = {};
          for (const e of entries) byKind[registryKind(e)] = (byKind[registryKind(e)] ?? 0) + 1;
          const digestCache: Record<string, number> = {};
          for (const what of ["manifest", "layer"])
            for (const result of ["hit", "miss"])
              digestCache[`${what} ${result}`] = metricDelta(
                p,
                RESOLVER,
                "quarry_bundle_cache_lookups_total",
                {
                  what,
                  result,
                },
              );
          log(`${name}: registry ${entries.length} requests`);
          return {
            registry: { requests: entries.length, byKind, bytes: entries.reduce((a, e) => a + e.bytes, 0) },
            digestCache,
            digestCacheBytesAfter: promSum(
              p.services[RESOLVER]?.metricsAfter ?? "",
              "quarry_bundle_cache_bytes",
            ),
            vmHwmAfterMiB: MiB(vmKiB(resolver.svc.pid, "VmHWM")),
          };
        },
      };
    },

    top: (s) => ({ bundles: s.bundles }),
    phaseJson: ({ registry, ...resolver }, p) => ({
      resolver,
      registry: { ...registry, perRequest: round(registry.requests / Math.max(1, p.completed), 2) },
      cpuMsPerRequest: {
        ...cpuMsPerRequest(p, RESOLVER),
        registry: round(((p.cpu.processes.registry ?? 0) * 1000) / Math.max(1, p.completed), 2),
      },
    }),
    headRows: (s) => [["bundles", s.bundles]],
    columns: [
      ["registry requests", (j) => calls(j.registry.byKind)],
      [
        "CPU ms/request (resolver / registry / all)",
        ({ cpuMsPerRequest: c }) => `${c.resolver} / ${c.registry} / ${c.all}`,
      ],
    ],
  }),
);
