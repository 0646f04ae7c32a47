// What Quarry costs in memory: every service as the process it is in production (--as-image: its
// image's tree, `pnpm deploy`ed, relinked and type-stripped to .js as images/Dockerfile builds it;
// else `node services/<name>/src/main.ts`; both with the charts' NODE_OPTIONS), on one control
// plane, git server, registry, HTTP server and hub fixture. --mode fleet: the eight services, one
// process each; all-in-one: services/all-in-one running all eight components in one process, as
// the umbrella chart's global.mode=all-in-one (its allInOne.nodeOptions); both: one, then the other,
// each in a namespace of its own. rest: each process's VmRSS after --settle s idle; peak: its VmHWM
// over a burst of --requests mixed requests (request i, by i mod 5: a cluster Task, a git file at
// main with cache auto, a bundle tag, a Task file by URL from an HTTP server on loopback, or a Task
// version from the hub protocol fixture); after: its VmRSS --settle s later.
// The targets: fleet, at most 80 MiB at rest and 120 MiB at the peak, per service;
// all-in-one, at most 120 MiB at rest and 160 MiB at the peak.
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
import { runBenchmark } from "./lib/benchmark.ts";
import { markdownTable } from "./lib/phase-report.ts";
import { vmKiB } from "./lib/proc.ts";
import { MODE_CHOICES, modesOf, type QuarryMode, startQuarry } from "./lib/quarry-modes.ts";
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

/** The figures' targets, MiB per process (issue 27). */
const TARGETS: Record<QuarryMode, { rest: number; peak: number }> = {
  fleet: { rest: 80, peak: 120 },
  "all-in-one": { rest: 120, peak: 160 },
};

/** The hub fixture's Artifact Hub catalog: the resolver's default for tasks, so requests name none. */
const HUB_CATALOG = "tekton-catalog-tasks";
const HUB_VERSIONS = ["0.1.0", "0.2.0"];

await runBenchmark({
  name: "fleet-memory",
  about: "Quarry's RSS at rest, at a burst's peak and after it: each service's, or the all-in-one process's.",
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
      help: "run each service from its image's tree (type-stripped, main.js bundled), not its sources",
    },
    mode: {
      type: "string",
      default: "fleet",
      choices: MODE_CHOICES,
      help: "fleet (a process per service), all-in-one (one process), or both in turn",
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
    const workDir = mkdtempSync(join(tmpdir(), "bench-fleet-"));
    ctx.defer(() => rmSync(workDir, { recursive: true, force: true }));
    /** A namespace of its own for a mode's run: its ConfigMaps and Tasks, no other run's requests. */
    const namespaceFor = async (mode: QuarryMode) => {
      const scn = await newScenario(mode === "fleet" ? "bench-fleet" : "bench-aio", { cp: info });
      ctx.defer(() => scn.cleanup());
      await configureGitNamespace(scn, git, "10m");
      await setConfig(scn, "bundle-resolver-config", {});
      await applyClusterTasks(admin, scn.namespace, f.tasks);
      return scn;
    };
    const requests = (ns: string) => [
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
    // the Deployment's env names the hub API (Tekton's ARTIFACT_HUB_API)
    const env = (name: string): Record<string, string> =>
      name === "hub-resolver" ? { ARTIFACT_HUB_API: hub.base } : {};
    const imageDir = f["as-image"] ? workDir : undefined;
    return { versions, admin, namespaceFor, requests, env, imageDir };
  },

  phases: (ctx, { admin, namespaceFor, requests, env, imageDir }) =>
    modesOf(ctx.flags.mode).map((mode) => ({
      name: mode,
      run: async () => {
        const f = ctx.flags;
        const scn = await namespaceFor(mode);
        const ns = scn.namespace;
        const quarry = await startQuarry(ctx.services, scn, { mode, services: FLEET, imageDir, env });
        const rss = (field: "VmRSS" | "VmHWM") =>
          Object.fromEntries(quarry.procs.map((p) => [p.name, MiB(vmKiB(p.pid, field))]));
        log(`${mode}: idle ${f.settle} s`);
        await sleep(f.settle * 1000);
        const rest = rss("VmRSS");
        const watch = trackRequests(ctx.signal, admin, ns);
        await watch.ready;
        log(`${mode}: burst of ${f.requests} requests`);
        const make = requests(ns);
        const batch = await runBatch({
          clients: Array.from({ length: f.concurrency }, () => admin),
          prefix: "burst",
          n: f.requests,
          tracker: watch.tracker,
          signal: ctx.signal,
          send: async (client, name, i, s) => {
            await createWithRetry(client, make[i % make.length]!(name, i), { retries: 0 }, ctx.signal);
            s.created = performance.now();
          },
        });
        const peak = rss("VmHWM");
        await watch.stop();
        const failed = batch.samples.flatMap((s) => (s.failed === undefined ? [] : [s.failed]));
        const seconds = round((batch.end - batch.start) / 1000, 1);
        log(`${mode}: burst done in ${seconds} s, ${failed.length} failed; idle ${f.settle} s`);
        await sleep(f.settle * 1000);
        const after = rss("VmRSS");
        await quarry.stop();
        const latency = summarize(
          batch.samples.flatMap((s) => (s.done === undefined ? [] : [s.done - s.t0])),
        );
        return { mode, seconds, failed, latency, rest, peak, after };
      },
    })),

  result: (ctx, { versions }, measured) => {
    if (measured.length === 0) throw new Error("the burst did not run");
    const figuresOf = ({ failed, mode, ...figures }: (typeof measured)[number]) => {
      const t = TARGETS[mode];
      const worst = (x: Record<string, number>) => Math.max(...Object.values(x));
      return {
        ...figures,
        failed: failed.length,
        targets: { ...t, restMet: worst(figures.rest) <= t.rest, peakMet: worst(figures.peak) <= t.peak },
      };
    };
    const modes = Object.fromEntries(measured.map((m) => [m.mode, figuresOf(m)]));
    return {
      machine: machineInfo(versions),
      requests: ctx.flags.requests,
      workloads: WORKLOADS,
      mode: ctx.flags.mode,
      // the first mode's figures at the top, as before --mode
      ...figuresOf(measured[0]!),
      modes,
    };
  },

  report(r, ctx, _s, measured) {
    const total = (x: Record<string, number>) =>
      round(
        Object.values(x).reduce((a, b) => a + b, 0),
        1,
      );
    return measured
      .flatMap((m) => {
        const x = r.modes[m.mode]!;
        const rows = Object.keys(x.rest).map((name) => [name, x.rest[name], x.peak[name], x.after[name]]);
        if (rows.length > 1) rows.push(["fleet (sum)", total(x.rest), total(x.peak), total(x.after)]);
        const first = m.failed[0] ? ` (first: ${m.failed[0]})` : "";
        const met = (ok: boolean) => (ok ? "met" : "NOT met");
        return [
          `${m.mode}: burst of ${r.requests} requests (${r.workloads.join("/")}), ${ctx.flags.concurrency} clients: ${x.seconds} s, p50 ${round(x.latency.p50, 0)} ms, p99 ${round(x.latency.p99, 0)} ms, ${x.failed} failed${first}`,
          `targets per process: rest <= ${x.targets.rest} MiB ${met(x.targets.restMet)}, peak <= ${x.targets.peak} MiB ${met(x.targets.peakMet)}`,
          "",
          markdownTable(["process", "rest MiB", "peak MiB", "after MiB"], rows),
          "",
        ];
      })
      .join("\n");
  },

  ok: (r) => Object.values(r.modes).every((m) => m.failed === 0),
});
