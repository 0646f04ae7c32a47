// What the fleet costs in memory: every service as the process it is in production (--as-image: its
// image's tree, `pnpm deploy`ed, relinked and type-stripped to .js as images/Dockerfile builds it;
// else `node services/<name>/src/main.ts`; both with the charts' NODE_OPTIONS), on one control
// plane, git server, registry, HTTP server and hub fixture. rest: each one's VmRSS after --settle s
// idle; peak: its VmHWM over a burst of --requests mixed requests (request i, by i mod 5: a cluster
// Task, a git file at main with cache auto, a bundle tag, a Task file by URL from an HTTP server on
// loopback, or a Task version from the hub protocol fixture); after: its VmRSS --settle s later.
// The targets: at most 100 MiB at rest and 160 MiB at the peak, per service.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LABEL_RESOLVER_TYPE } from "@quarry/api";
import { startGitServer } from "@quarry/devcluster/git-server";
import { ociTools, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import { taskYaml } from "@quarry/harness/bundle-scenario";
import { startHttpFixture } from "@quarry/harness/http-server";
import { startHubFixture } from "@quarry/harness/hub-fixture";
import { newRequest, newScenario, setConfig } from "@quarry/harness/scenario";
import { deployServiceTree } from "@quarry/image-builder/build-layout";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import { markdownTable } from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { controlPlaneVersions, machineInfo } from "./lib/report.ts";
import { createWithRetry, runBatch, trackRequests } from "./lib/requests.ts";
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
  "http-resolver",
  "hub-resolver",
] as const;

/** The burst's shares, in the order request i takes them (i mod 5). */
const WORKLOADS = ["cluster", "git", "bundle", "http", "hub"] as const;

/** The hub fixture's Artifact Hub catalog: the resolver's default for tasks, so requests name none. */
const HUB_CATALOG = "tekton-catalog-tasks";
const HUB_VERSIONS = ["0.1.0", "0.2.0"];

await runBenchmark({
  name: "fleet-memory",
  about: "Every service's RSS at rest, at a burst's peak and after it.",
  deadline: 900,
  flags: {
    requests: {
      type: "int",
      default: 1000,
      min: WORKLOADS.length,
      help: `burst size, a fifth each ${WORKLOADS.join(", ")}`,
    },
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
    "http-files": { type: "int", default: 50, min: 1, help: "http workload's Task files on the HTTP server" },
    "hub-tasks": { type: "int", default: 20, min: 1, help: "hub workload's Tasks in the hub fixture" },
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
    const bundle = (i: number) => ({
      ref: reg.ref(`fleet/task:b-${i % f.bundles}`),
      name: `b-${i % f.bundles}`,
    });
    for (let b = 0; b < f.bundles; b++)
      await tknBundlePush(bundle(b).ref, [taskYaml(bundle(b).name, "echo")]);
    const git = await startGitServer();
    ctx.defer(() => git.stop());
    const workload = await buildGitWorkload(git, { files: f.files, bulkMb: 0 });
    const web = await startHttpFixture();
    ctx.defer(() => web.close());
    const httpUrl = (i: number) => `${web.base}/tasks/h-${i % f["http-files"]}.yaml`;
    for (let j = 0; j < f["http-files"]; j++) {
      const body = taskYaml(`h-${j}`, "echo");
      web.route(new URL(httpUrl(j)).pathname, (_req, res) =>
        res.writeHead(200, { "content-type": "text/yaml" }).end(body),
      );
    }
    const hub = await startHubFixture();
    ctx.defer(() => hub.close());
    for (let j = 0; j < f["hub-tasks"]; j++)
      hub.add({
        hub: "artifact",
        catalog: HUB_CATALOG,
        kind: "task",
        name: `hub-${j}`,
        versions: HUB_VERSIONS.map((version) => ({ version, yaml: taskYaml(`hub-${j}`, `echo ${version}`) })),
      });
    const { admin, info } = await ctx.controlPlane({ tekton: true });
    const scn = await newScenario("bench-fleet", { cp: info });
    await configureGitNamespace(scn, git, "10m");
    await setConfig(scn, "bundle-resolver-config", {});
    await applyClusterTasks(admin, scn.namespace, f.tasks);
    const workDir = mkdtempSync(join(tmpdir(), "bench-fleet-"));
    ctx.defer(() => rmSync(workDir, { recursive: true, force: true }));
    for (const name of FLEET) {
      const entry = f["as-image"] ? join(workDir, name, "src", "main.js") : undefined;
      if (entry) {
        log(`pnpm deploy ${name}, relinked and type-stripped`);
        await deployServiceTree(name, join(workDir, name));
      }
      // the Deployment's env names the hub API (Tekton's ARTIFACT_HUB_API)
      const env: Record<string, string> = name === "hub-resolver" ? { ARTIFACT_HUB_API: hub.base } : {};
      await ctx.services.start(scn, name, env, { entry });
    }
    const ns = scn.namespace;
    const requests = [
      (name: string, i: number) => clusterRequest(ns, name, i, f.tasks),
      (name: string, i: number) => gitRequest(workload, ns, name, i, { cache: "auto" }),
      (name: string, i: number) =>
        newRequest(
          ns,
          name,
          { [LABEL_RESOLVER_TYPE]: "bundles" },
          { bundle: bundle(i).ref, name: bundle(i).name, kind: "task" },
        ),
      (name: string, i: number) =>
        newRequest(ns, name, { [LABEL_RESOLVER_TYPE]: "http" }, { url: httpUrl(i) }),
      (name: string, i: number) =>
        newRequest(
          ns,
          name,
          { [LABEL_RESOLVER_TYPE]: "hub" },
          { name: `hub-${i % f["hub-tasks"]}`, version: HUB_VERSIONS.at(-1)! },
        ),
    ];
    return { versions, admin, ns, requests };
  },

  phases: (ctx, { admin, ns, requests }) =>
    onePhase("burst", async () => {
      const f = ctx.flags;
      const rss = (field: "VmRSS" | "VmHWM") =>
        Object.fromEntries(ctx.services.running.map((s) => [s.name, MiB(vmKiB(s.pid, field))]));
      log(`idle ${f.settle} s`);
      await sleep(f.settle * 1000);
      const rest = rss("VmRSS");
      const watch = trackRequests(ctx.signal, admin, ns);
      await watch.ready;
      log(`burst of ${f.requests} requests`);
      const batch = await runBatch({
        clients: Array.from({ length: f.concurrency }, () => admin),
        prefix: "burst",
        n: f.requests,
        tracker: watch.tracker,
        signal: ctx.signal,
        send: async (client, name, i, s) => {
          await createWithRetry(client, requests[i % requests.length]!(name, i), { retries: 0 }, ctx.signal);
          s.created = performance.now();
        },
      });
      const peak = rss("VmHWM");
      await watch.stop();
      const failed = batch.samples.flatMap((s) => (s.failed === undefined ? [] : [s.failed]));
      const seconds = round((batch.end - batch.start) / 1000, 1);
      log(`burst done in ${seconds} s, ${failed.length} failed; idle ${f.settle} s`);
      await sleep(f.settle * 1000);
      const latency = summarize(batch.samples.flatMap((s) => (s.done === undefined ? [] : [s.done - s.t0])));
      return { seconds, failed, latency, rest, peak, after: rss("VmRSS") };
    }),

  result: (ctx, { versions }, [m]) => {
    if (!m) throw new Error("the burst did not run");
    const { failed, ...figures } = m;
    return {
      machine: machineInfo(versions),
      requests: ctx.flags.requests,
      workloads: WORKLOADS,
      ...figures,
      failed: failed.length,
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
    const first = m?.failed[0] ? ` (first: ${m.failed[0]})` : "";
    return [
      `burst: ${r.requests} requests (${r.workloads.join("/")}), ${ctx.flags.concurrency} clients: ${r.seconds} s, p50 ${round(r.latency.p50, 0)} ms, p99 ${round(r.latency.p99, 0)} ms, ${r.failed} failed${first}`,
      "",
      markdownTable(["service", "rest MiB", "peak MiB", "after MiB"], rows),
    ].join("\n");
  },

  ok: (r) => r.failed === 0,
});
