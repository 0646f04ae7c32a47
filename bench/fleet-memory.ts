// Benchmark: what the fleet costs in memory. Every service of the fleet (the
// lifecycle controller, the cluster, git, bundle and pipe resolvers, the run
// controller) runs as the real process it is in production, all against one
// control plane, git server and registry; then:
//
//   rest   each service's VmRSS after --settle seconds idle (informers synced)
//   burst  --requests mixed requests created at once by --concurrency clients,
//          request i: cluster (i mod 3 = 0, one of --tasks Tasks), git (1, one of
//          --files files at main, cache auto), bundle (2, one of --bundles tags);
//          each service's peak RSS (VmHWM) over the burst
//   after  each service's VmRSS --settle seconds after the burst
//
// The issue's targets: at most 100 MiB at rest and 160 MiB at the peak, per service.
//
// --as-image runs each service as its image does: its `pnpm deploy` tree, relinked and
// type-stripped to .js (images/relink-workspace.ts, images/strip-types.ts), `node src/main.js`;
// without it, `node services/<name>/src/main.ts` as tests do. Both with the charts' NODE_OPTIONS.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { startGitServer } from "@quarry/devcluster/git-server";
import { ociTools, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import { taskYaml } from "@quarry/harness/bundle-scenario";
import { newRequest, newScenario, setConfig } from "@quarry/harness/scenario";
import { deployServiceTree } from "@quarry/image-builder/build-layout";
import type { KubeClient } from "@quarry/kube";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import { markdownTable } from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { controlPlaneVersions, machineInfo } from "./lib/report.ts";
import { createWithRetry, runBatch, type Sample, trackRequests } from "./lib/requests.ts";
import { log, sleep } from "./lib/run.ts";
import { MiB } from "./lib/service-stats.ts";
import { round, summarize } from "./lib/stats.ts";
import {
  applyClusterTasks,
  buildGitWorkload,
  clusterRequest,
  configureGitNamespace,
  gitRequest,
} from "./lib/workloads.ts";

const FLEET = [
  "lifecycle-controller",
  "cluster-resolver",
  "git-resolver",
  "bundle-resolver",
  "pipe-resolver",
  "run-controller",
] as const;

await runBenchmark({
  name: "fleet-memory",
  about: "Every service's RSS at rest, at a burst's peak and after it.",
  deadline: 900,
  flags: {
    requests: { type: "int", default: 1000, min: 3, help: "burst size, a third each cluster, git, bundle" },
    concurrency: { type: "int", default: 50, min: 1, help: "clients creating the burst" },
    settle: {
      type: "int",
      default: 20,
      min: 0,
      arg: "S",
      help: 'idle seconds before "rest" and before "after"',
    },
    tasks: { type: "int", default: 50, min: 1, help: "cluster workload's Tasks" },
    files: { type: "int", default: 50, min: 1, help: "git workload's Task files" },
    bundles: { type: "int", default: 20, min: 1, help: "bundle tags pushed" },
    "as-image": {
      type: "boolean",
      help: "run each service from its image's tree (type-stripped .js), not its sources",
    },
  },

  async setup(ctx) {
    const f = ctx.flags;
    const versions = controlPlaneVersions();
    ociTools();
    const reg = await startRegistry();
    ctx.defer(() => reg.dispose());
    log(`pushing ${f.bundles} bundles`);
    for (let b = 0; b < f.bundles; b++)
      await tknBundlePush(reg.ref(`fleet/task:b-${b}`), [taskYaml(`b-${b}`, "echo")]);
    const git = await startGitServer();
    ctx.defer(() => git.stop());
    const workload = await buildGitWorkload(git, { files: f.files, bulkMb: 0 });
    const { admin, info } = await ctx.controlPlane({ tekton: true });
    const scn = await newScenario("bench-fleet", { cp: info });
    await configureGitNamespace(scn, git, "10m");
    await setConfig(scn, "bundle-resolver-config", {});
    await applyClusterTasks(admin, scn.namespace, f.tasks);
    const workDir = mkdtempSync(join(tmpdir(), "bench-fleet-"));
    ctx.defer(() => rmSync(workDir, { recursive: true, force: true }));
    for (const name of FLEET) {
      // each service's tree as its image holds it (images/Dockerfile's build steps)
      let entry: string | undefined;
      if (f["as-image"]) {
        log(`pnpm deploy ${name}, relinked and type-stripped`);
        await deployServiceTree(name, join(workDir, name));
        entry = join(workDir, name, "src", "main.js");
      }
      await ctx.services.start(scn, name, {}, { entry });
    }
    return { versions, reg, workload, admin, scn };
  },

  phases: (ctx, { reg, workload, admin, scn }) =>
    onePhase("burst", async () => {
      const f = ctx.flags;
      const rss = (field: "VmRSS" | "VmHWM") =>
        Object.fromEntries(ctx.services.running.map((s) => [s.name, MiB(vmKiB(s.pid, field))]));
      log(`idle ${f.settle} s`);
      await sleep(f.settle * 1000);
      const rest = rss("VmRSS");
      const watch = trackRequests(ctx.signal, admin, scn.namespace);
      const { tracker } = watch;
      await watch.ready;
      const clientStats = { retries: 0 };
      const send = async (client: KubeClient, name: string, i: number, s: Sample) => {
        const b = i % f.bundles;
        const rr = [
          () => clusterRequest(scn.namespace, name, i, f.tasks),
          () => gitRequest(workload, scn.namespace, name, i, { cache: "auto" }),
          () =>
            newRequest(
              scn.namespace,
              name,
              { [LABEL_RESOLVER_TYPE]: "bundles" },
              { bundle: reg.ref(`fleet/task:b-${b}`), name: `b-${b}`, kind: "task" },
            ),
        ][i % 3]!();
        await createWithRetry(client, rr, clientStats, ctx.signal);
        s.created = performance.now();
      };
      log(`burst of ${f.requests} requests`);
      const clients = Array.from({ length: f.concurrency }, () => admin);
      const batch = await runBatch({
        clients,
        prefix: "burst",
        n: f.requests,
        tracker,
        signal: ctx.signal,
        send,
      });
      const peak = rss("VmHWM");
      await watch.stop();
      const failed = batch.samples.filter((s) => s.failed !== undefined);
      const seconds = round((batch.end - batch.start) / 1000, 1);
      log(`burst done in ${seconds} s, ${failed.length} failed; idle ${f.settle} s`);
      await sleep(f.settle * 1000);
      const latency = summarize(batch.samples.flatMap((s) => (s.done === undefined ? [] : [s.done - s.t0])));
      return { seconds, failed, latency, rest, peak, after: rss("VmRSS") };
    }),

  result: (ctx, { versions }, [m]) => {
    if (!m) throw new Error("the burst did not run");
    const { rest, peak, after, latency, seconds } = m;
    return {
      machine: machineInfo(versions),
      requests: ctx.flags.requests,
      seconds,
      failed: m.failed.length,
      latency,
      rest,
      peak,
      after,
    };
  },

  report(r, ctx, _s, [m]) {
    const total = (x: Record<string, number>) =>
      round(
        Object.values(x).reduce((a, b) => a + b, 0),
        1,
      );
    const rows = Object.keys(r.rest).map((name) => [name, r.rest[name], r.peak[name], r.after[name]]);
    rows.push(["fleet (sum)", total(r.rest), total(r.peak), total(r.after)]);
    const first = m?.failed[0]?.failed;
    return [
      `burst: ${r.requests} requests (cluster/git/bundle), ${ctx.flags.concurrency} clients: ${r.seconds} s, p50 ${round(r.latency.p50, 0)} ms, p99 ${round(r.latency.p99, 0)} ms, ${r.failed} failed${first ? ` (first: ${first})` : ""}`,
      "",
      markdownTable(["service", "rest MiB", "peak MiB", "after MiB"], rows),
    ].join("\n");
  },

  ok: (r) => r.failed === 0,
});
