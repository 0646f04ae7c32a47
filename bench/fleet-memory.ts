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
//
//   node bench/fleet-memory.ts [--as-image] [--requests 1000] [--concurrency 50] [--settle 20] [--json out.json]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { buildBinaries, type ControlPlane } from "@quarry/devcluster/controlplane";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { ociTools, type Registry, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import type { KubeClient } from "@quarry/kube";
import { taskYaml } from "../e2e/fixtures/bundle-scenario.ts";
import { newRequest, newScenario, setConfig } from "../e2e/harness/scenario.ts";
import { deployServiceTree } from "../images/build-layout.ts";
import { startBenchControlPlane } from "./lib/controlplane.ts";
import { vmKiB } from "./lib/proc.ts";
import { machineInfo } from "./lib/report.ts";
import { createWithRetry, runBatch, type Sample, Tracker, watchRequests } from "./lib/requests.ts";
import { BoundedRun, intFlag, log, sleep } from "./lib/run.ts";
import { BenchServices, MiB } from "./lib/service-stats.ts";
import { round, summarize } from "./lib/stats.ts";
import {
  applyClusterTasks,
  buildGitWorkload,
  clusterRequest,
  configureGitNamespace,
  gitRequest,
} from "./lib/workloads.ts";

const USAGE = `usage: node bench/fleet-memory.ts [options]
  --requests N      burst size (default 1000), a third each cluster, git, bundle
  --concurrency N   clients creating the burst (default 50)
  --settle S        idle seconds before "rest" and before "after" (default 20)
  --tasks N         cluster workload's Tasks (default 50)
  --files N         git workload's Task files (default 50)
  --bundles N       bundle tags pushed (default 20)
  --as-image        run each service from its image's tree (type-stripped .js), not its sources
  --deadline S      global deadline (default 900)
  --json FILE       figures as JSON`;

const { values: flags } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "50" },
    settle: { type: "string", default: "20" },
    tasks: { type: "string", default: "50" },
    files: { type: "string", default: "50" },
    bundles: { type: "string", default: "20" },
    deadline: { type: "string", default: "900" },
    "as-image": { type: "boolean", default: false },
    json: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const N = intFlag("requests", flags.requests, 3, USAGE);
const CONCURRENCY = intFlag("concurrency", flags.concurrency, 1, USAGE);
const SETTLE_S = intFlag("settle", flags.settle, 0, USAGE);
const TASKS = intFlag("tasks", flags.tasks, 1, USAGE);
const FILES = intFlag("files", flags.files, 1, USAGE);
const BUNDLES = intFlag("bundles", flags.bundles, 1, USAGE);
const FLEET = [
  "lifecycle-controller",
  "cluster-resolver",
  "git-resolver",
  "bundle-resolver",
  "pipe-resolver",
  "run-controller",
] as const;

const run = new BoundedRun(intFlag("deadline", flags.deadline, 60, USAGE));
let cp: ControlPlane | undefined;
let git: GitServer | undefined;
let registry: Registry | undefined;
const services = new BenchServices(run, "info");

const rssMiB = (pid: number) => MiB(vmKiB(pid, "VmRSS"));
const workDir = mkdtempSync(join(tmpdir(), "bench-fleet-"));

/** Each service's tree as its image holds it (images/Dockerfile's build steps), under `dir`. */
async function imageTrees(dir: string): Promise<string> {
  for (const name of FLEET) {
    const app = join(dir, name);
    log(`pnpm deploy ${name}, relinked and type-stripped`);
    await deployServiceTree(name, app);
  }
  return dir;
}

try {
  await buildBinaries();
  ociTools();
  registry = await startRegistry();
  const reg = registry;
  log(`pushing ${BUNDLES} bundles`);
  for (let b = 0; b < BUNDLES; b++)
    await tknBundlePush(reg.ref(`fleet/task:b-${b}`), [taskYaml(`b-${b}`, "echo")]);
  git = await startGitServer();
  const workload = await buildGitWorkload(git, { files: FILES, bulkMb: 0 });

  const { admin, info } = await startBenchControlPlane(
    run,
    (started) => {
      cp = started;
    },
    { tekton: true },
  );
  const scn = await newScenario("bench-fleet", { cp: info });
  await configureGitNamespace(scn, git, "10m");
  await setConfig(scn, "bundle-resolver-config", {});
  await applyClusterTasks(admin, scn.namespace, TASKS);
  const trees = flags["as-image"] ? await imageTrees(workDir) : undefined;
  for (const name of FLEET)
    await services.start(scn, name, {}, { entry: trees && join(trees, name, "src", "main.js") });

  log(`idle ${SETTLE_S} s`);
  await sleep(SETTLE_S * 1000);
  const rest = Object.fromEntries(services.running.map((s) => [s.name, rssMiB(s.pid)]));

  const tracker = new Tracker();
  const watchStop = new AbortController();
  const signal = AbortSignal.any([run.signal, watchStop.signal]);
  let listed!: () => void;
  const ready = new Promise<void>((r) => {
    listed = r;
  });
  const watching = watchRequests(admin, scn.namespace, tracker, signal, { restarts: 0 }, listed);
  await ready;
  const clientStats = { retries: 0 };
  const send = async (client: KubeClient, name: string, i: number, s: Sample) => {
    const rr = [
      () => clusterRequest(scn.namespace, name, i, TASKS),
      () => gitRequest(workload, scn.namespace, name, i, { cache: "auto" }),
      () =>
        newRequest(
          scn.namespace,
          name,
          { [LABEL_RESOLVER_TYPE]: "bundles" },
          { bundle: reg.ref(`fleet/task:b-${i % BUNDLES}`), name: `b-${i % BUNDLES}`, kind: "task" },
        ),
    ][i % 3]?.();
    if (!rr) throw new Error("unreachable");
    await createWithRetry(client, rr, clientStats, run.signal);
    s.created = performance.now();
  };
  log(`burst of ${N} requests`);
  const batch = await runBatch({
    clients: Array.from({ length: CONCURRENCY }, () => admin),
    prefix: "burst",
    n: N,
    tracker,
    signal: run.signal,
    send,
  });
  const peak = Object.fromEntries(services.running.map((s) => [s.name, MiB(vmKiB(s.pid, "VmHWM"))]));
  const failed = batch.samples.filter((s) => s.failed !== undefined);
  const latency = summarize(batch.samples.flatMap((s) => (s.done === undefined ? [] : [s.done - s.t0])));
  const seconds = round((batch.end - batch.start) / 1000, 1);
  log(`burst done in ${seconds} s, ${failed.length} failed; idle ${SETTLE_S} s`);
  await sleep(SETTLE_S * 1000);
  const after = Object.fromEntries(services.running.map((s) => [s.name, rssMiB(s.pid)]));
  watchStop.abort();
  await watching.catch(() => {});
  run.finish();

  const rows = services.running.map((s) => [
    s.name,
    String(rest[s.name]),
    String(peak[s.name]),
    String(after[s.name]),
  ]);
  const total = (m: Record<string, number>) =>
    String(
      round(
        Object.values(m).reduce((a, b) => a + b, 0),
        1,
      ),
    );
  rows.push(["fleet (sum)", total(rest), total(peak), total(after)]);
  process.stdout.write(
    [
      "",
      `burst: ${N} requests (cluster/git/bundle), ${CONCURRENCY} clients: ${seconds} s, p50 ${round(latency.p50, 0)} ms, p99 ${round(latency.p99, 0)} ms, ${failed.length} failed${failed[0] ? ` (first: ${failed[0].failed})` : ""}`,
      "",
      "| service | rest MiB | peak MiB | after MiB |",
      "| --- | ---: | ---: | ---: |",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
      "",
    ].join("\n"),
  );
  if (flags.json) {
    writeFileSync(
      flags.json,
      `${JSON.stringify({ machine: machineInfo({}), requests: N, seconds, failed: failed.length, latency, rest, peak, after }, null, 2)}\n`,
    );
  }
  if (failed.length > 0) process.exitCode = 1;
} finally {
  await services.stopAll();
  await git?.stop();
  await registry?.dispose();
  await cp?.stop();
  rmSync(workDir, { recursive: true, force: true });
}
