// quarry-e2e: needs-node
//
// 20 pipe requests at once on 2 resolver workers, shared with the git
// resolver: one process hosts both on one work queue (runResolvers, through
// dev/harness/src/pipe-git-resolver.ts) with QUARRY_CONCURRENCY=2. Each pipe
// pod's init container sleeps INIT_S seconds. Were a worker held while its pod
// ran, at most 2 pods would exist at once and a git request would wait for a
// pod to finish. Instead all 20 pods exist together, their init containers run
// side by side, no resolver step takes near a pod's time, and a git request
// created while the init containers sleep resolves before any of them ends,
// within its usual time (a baseline measured first, same process, idle queue)
// plus a margin for the CPU the pods take. No request is lost or resolved twice.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pipeStrategies, pipes } from "@quarry/api";
import { buildStandardRepo, type StandardRepo, TASK_V2 } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import type { RunningService } from "@quarry/devcluster/service";
import { waitUntil } from "@quarry/devcluster/wait";
import { GIT_LABELS } from "@quarry/harness/git-scenario";
import { sharedNode } from "@quarry/harness/node";
import { startPipeGitResolver } from "@quarry/harness/pipe-git-scenario";
import {
  configMapOutputs,
  nodeConfig,
  PIPE_LABELS,
  pipeObject,
  pipeStrategy,
  scriptPod,
} from "@quarry/harness/pipe-scenario";
import { maxOverlap, PodTimelines, watchPipePods } from "@quarry/harness/pod-timeline";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  type Scenario,
  setConfig,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import {
  firstSeen,
  recordTransitions,
  type TransitionRecorder,
  terminalStates,
} from "@quarry/harness/transitions";
import { type ConfigMapObject, configMaps } from "@quarry/kube";
import yaml from "js-yaml";

const PIPES = 20;
const WORKERS = 2;
const INIT_S = 10;
/** What a git request may take over its baseline while 20 pods start and sleep: CPU contention, not waiting. */
const GIT_MARGIN_MS = 3000;
/** A bucket of the SDK's duration histogram, far below INIT_S: no pipe step may take longer. */
const STEP_BOUND_S = 5;

let server: GitServer | undefined;
let repo: StandardRepo | undefined;
let resolver: RunningService;
let recorder: TransitionRecorder | undefined;
/** Stops the pod watch, also when an assertion throws first (an open watch keeps this file's process alive). */
const stopPodWatch = new AbortController();
const cacheDir = mkdtempSync(join(tmpdir(), "quarry-e2e-pipe-load-cache-"));

const scenario = useScenario("pipe-load", {
  start: ["lifecycle-controller"],
  // a pipe request lives longer than the default 1m global timeout allows
  lifecycleConfig: { "default-maximum-resolution-timeout": "5m" },
  setup: async (scn) => {
    const ns = scn.namespace;
    const node = await sharedNode();
    server = await startGitServer();
    repo = await buildStandardRepo(server.root);
    await setConfig(scn, "pipe-resolver-config", { ...nodeConfig(node), "pending-timeout": "150s" });
    const script = `sleep ${INIT_S}; echo "$(params.n)" > /out/n`;
    await scn.admin.create(
      pipeStrategies,
      pipeStrategy(ns, "load", scriptPod(node.toolsImage, script), [{ name: "n" }], {
        outputs: configMapOutputs("/out/n"),
      }),
    );
    await scn.admin.create(
      pipes,
      pipeObject(ns, "load", { kind: "PipeStrategy", name: "load" }, [
        { file: "/out/n", kind: "ConfigMap", key: "n" },
      ]),
    );
    recorder = recordTransitions(scn.admin, scn.namespace);
    resolver = await startPipeGitResolver(scn, {
      QUARRY_CONCURRENCY: String(WORKERS),
      QUARRY_GIT_CACHE_DIR: cacheDir,
    });
  },
});
after(async () => {
  stopPodWatch.abort();
  recorder?.stop();
  repo?.builder.dispose();
  await server?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Creates a git request for task.yaml at main; its time from just before the create to True seen on the watch. */
async function gitRequest(scn: Scenario, name: string): Promise<{ ms: number; data: string }> {
  const url = server!.url(repo!.name);
  const t0 = performance.now();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, GIT_LABELS, { url, revision: "main", pathInRepo: "task.yaml" }),
  );
  const rr = await waitForRequest(scn, name, finished, 60_000);
  assert.ok(resolvedOk(rr), `${name}: ${JSON.stringify(rr.status)}`);
  const seen = await waitUntil(`${name} True on the watch`, () => firstSeen(recorder!, name, "True"));
  return { ms: seen - t0, data: dataOf(rr) };
}

/** Sum of a histogram series' samples of the pipe type (`le` picks one bucket). */
function pipeSteps(metrics: string, series: "count" | "bucket", le?: string): number {
  const name = `quarry_resolution_duration_seconds_${series}{`;
  return metrics
    .split("\n")
    .filter(
      (l) =>
        l.startsWith(name) && l.includes('type="pipe"') && (le === undefined || l.includes(`le="${le}"`)),
    )
    .reduce(
      (sum, l) =>
        sum +
        Number(
          l
            .slice(l.lastIndexOf("}") + 1)
            .trim()
            .split(" ")[0],
        ),
      0,
    );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

test("20 pipe requests on 2 shared workers: the pods run side by side, and a git request made meanwhile resolves in its usual time", async () => {
  const scn = scenario();
  const ns = scn.namespace;
  // the first request fetches into the resolver's cache; the next ones show its usual time, idle
  await gitRequest(scn, "git-warm");
  const baseline = median([
    (await gitRequest(scn, "git-base-1")).ms,
    (await gitRequest(scn, "git-base-2")).ms,
    (await gitRequest(scn, "git-base-3")).ms,
  ]);

  const timelines = new PodTimelines();
  const watching = watchPipePods(scn.admin, ns, timelines, stopPodWatch.signal);
  const names = Array.from({ length: PIPES }, (_, i) => `pipe-${i}`);
  await Promise.all(
    names.map((name, i) =>
      createRequest(scn.admin, newRequest(ns, name, PIPE_LABELS, { pipe: "load", n: String(i) })),
    ),
  );

  // while the pods sleep: all of them exist, more init containers run than there are workers, none has ended
  await waitUntil(
    `${PIPES} pipe pods, over ${WORKERS} init containers running`,
    () => {
      const pods = timelines.list();
      return pods.length === PIPES && pods.filter((p) => p.initRunning !== undefined).length > WORKERS;
    },
    { timeoutMs: 120_000, intervalMs: 50 },
  );
  assert.equal(
    timelines.list().filter((p) => p.initDone !== undefined).length,
    0,
    `no init container has ended yet (INIT_S ${INIT_S} s)`,
  );
  const during = await gitRequest(scn, "git-during");
  const gitDoneAt = firstSeen(recorder!, "git-during", "True")!;

  for (const [i, name] of names.entries()) {
    const rr = await waitForRequest(scn, name, finished, 180_000);
    assert.ok(resolvedOk(rr), `${name}: ${JSON.stringify(rr.status)}`);
    const [result] = yaml.load(dataOf(rr)) as { name: string }[];
    assert.equal(result?.name, `${name}-load-n`);
    const cm = await scn.admin.get<ConfigMapObject & { binaryData?: Record<string, string> }>(
      configMaps,
      ns,
      result.name,
    );
    assert.equal(
      Buffer.from(cm.binaryData?.n ?? "", "base64").toString(),
      `${i}\n`,
      `${name}'s own pod wrote it`,
    );
  }
  await waitUntil("every pipe pod deleted", () => timelines.list().every((p) => p.deleted !== undefined), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  stopPodWatch.abort();
  await watching;

  const pods = timelines.list();
  const atOnce = maxOverlap(pods.map((p) => [p.added, p.deleted]));
  const initsAtOnce = maxOverlap(pods.map((p) => [p.initRunning, p.initDone]));
  const firstInitDone = Math.min(...pods.map((p) => p.initDone ?? Number.POSITIVE_INFINITY));
  const metrics = (await resolver.ops("/metrics")).body;
  const steps = pipeSteps(metrics, "count");
  const quickSteps = pipeSteps(metrics, "bucket", String(STEP_BOUND_S));
  console.log(
    `git baseline ${baseline.toFixed(0)} ms, during the pods ${during.ms.toFixed(0)} ms; ${atOnce} pods at once, ${initsAtOnce} init containers running at once; ${steps} pipe steps`,
  );

  // one pod per request, all of them there together: no worker waited for a pod
  assert.deepEqual(pods.map((p) => p.request).sort(), [...names].sort(), "one pod per request");
  assert.equal(atOnce, PIPES, "every pipe pod existed at the same time");
  assert.ok(
    initsAtOnce > WORKERS,
    `${initsAtOnce} init containers ran at once, more than ${WORKERS} workers`,
  );
  assert.ok(steps >= 2 * PIPES, `at least a pending and a final step per pipe (${steps})`);
  assert.equal(quickSteps, steps, `every pipe step took under ${STEP_BOUND_S} s; a pod ran ${INIT_S} s`);

  // the git request on the same two workers did not wait for a pod
  assert.equal(during.data, TASK_V2);
  assert.ok(gitDoneAt < firstInitDone, "git resolved while every init container still slept");
  assert.ok(
    during.ms <= baseline + GIT_MARGIN_MS,
    `git during the pods ${during.ms.toFixed(0)} ms, usual ${baseline.toFixed(0)} ms + ${GIT_MARGIN_MS} ms`,
  );

  // nothing lost, nothing resolved twice
  for (const name of [...names, "git-warm", "git-base-1", "git-base-2", "git-base-3", "git-during"]) {
    const terminal = terminalStates(recorder!.transitions.get(name) ?? []);
    assert.deepEqual(
      terminal.map((s) => s.split("/")[0]),
      ["True"],
      `${name}: ${JSON.stringify(recorder!.transitions.get(name))}`,
    );
  }
});
