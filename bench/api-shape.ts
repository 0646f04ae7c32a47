// Benchmark: what one ResolutionRequest costs kube-apiserver and etcd by its
// shape, with no controller running. The same API calls per request (a
// create, a status merge patch playing the resolver, a status merge patch
// playing the lifecycle controller's Succeeded=True) for requests shaped like
// the lifecycle floor's (no params, a small status.data) and like a git
// request's (four params; what the git resolver writes in status: data, four
// annotations, refSource and source), each half only, and the git shape with a third watcher. Rounds alternate the
// shapes so the machine's drift falls on all of them alike.
//
// Why: the git benchmark's phases cost the apiserver more per request than
// the floor with the same number of calls (docs/performance.md, "Git resolver").
import { LABEL_RESOLVER_TYPE, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import { newRequest, newScenario } from "@quarry/harness/scenario";
import { type KubeClient, RestKubeClient } from "@quarry/kube";
import { onePhase, runBenchmark } from "./lib/benchmark.ts";
import type { BenchControlPlane } from "./lib/controlplane.ts";
import { FLOOR_DATA } from "./lib/floor.ts";
import { taskYaml } from "./lib/git-repo.ts";
import { gitSuccessStatus } from "./lib/git-status.ts";
import { cpuSeconds } from "./lib/proc.ts";
import { log, sleep } from "./lib/run.ts";
import { median, round } from "./lib/stats.ts";
import { columns, valueReport } from "./lib/value-rows.ts";

const GIT_URL = "http://127.0.0.1:40000/bench.git";
const COMMIT = "97556f27a5e20ffec859354724f87cbbf82b5721";
const gitParams = { url: GIT_URL, revision: "main", pathInRepo: "tasks/t-00123.yaml", cache: "never" };
/** What the git resolver writes for one of the git benchmark's files. */
const gitStatus = gitSuccessStatus(GIT_URL, COMMIT, gitParams.pathInRepo, taskYaml("t-123", "v1"));

interface Shape {
  name: string;
  params: Record<string, string> | undefined;
  status: Record<string, unknown>;
  watchers: number;
}
const SHAPES: Shape[] = [
  { name: "floor", params: undefined, status: { data: FLOOR_DATA }, watchers: 2 },
  { name: "git", params: gitParams, status: gitStatus, watchers: 2 },
  { name: "git params, floor status", params: gitParams, status: { data: FLOOR_DATA }, watchers: 2 },
  { name: "floor params, git status", params: undefined, status: gitStatus, watchers: 2 },
  { name: "git, 3 watchers", params: gitParams, status: gitStatus, watchers: 3 },
];

interface Trial {
  apiserverMs: number;
  etcdMs: number;
  objectBytes: number;
  managedFieldsBytes: number;
}

/** `--requests` requests of one shape in a fresh namespace, `watchers` watches decoding every event. */
async function trial(
  plane: BenchControlPlane,
  shape: Shape,
  sizes: { n: number; concurrency: number; signal: AbortSignal },
): Promise<Trial> {
  const { cp, pids } = plane;
  const scn = await newScenario("bench-shape", { cp: plane.info });
  const ns = scn.namespace;
  const stop = new AbortController();
  const watches = Array.from({ length: shape.watchers }, async () => {
    const c = RestKubeClient.fromEnvironment(cp.adminKubeconfig);
    const selector = { labelSelector: `${LABEL_RESOLVER_TYPE}=git` };
    try {
      for await (const _ of c.watch<ResolutionRequest>(resolutionRequests, ns, selector, stop.signal)) {
        // a controller's informer parses every event too: the stream's JSON is decoded by watch()
      }
    } catch {
      // aborted at the end
    }
  });
  const resolver: KubeClient = RestKubeClient.fromEnvironment(cp.adminKubeconfig);
  const lifecycle: KubeClient = RestKubeClient.fromEnvironment(cp.adminKubeconfig);
  const cpu = (): [number, number] => [
    cpuSeconds(pids["kube-apiserver"] ?? 0) ?? 0,
    cpuSeconds(pids.etcd ?? 0) ?? 0,
  ];
  await sleep(500);
  const [api0, etcd0] = cpu();
  let next = 0;
  await Promise.all(
    Array.from({ length: sizes.concurrency }, async () => {
      while (next < sizes.n && !sizes.signal.aborted) {
        const name = `r-${next++}`;
        const labels = { [LABEL_RESOLVER_TYPE]: "git" };
        await resolver.create(resolutionRequests, newRequest(ns, name, labels, shape.params));
        await resolver.mergePatch(resolutionRequests, ns, name, { status: shape.status }, "status");
        const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
        const done = { type: "Succeeded", status: "True", lastTransitionTime: now };
        const patch = { status: { conditions: [done], observedGeneration: 1 } };
        await lifecycle.mergePatch(resolutionRequests, ns, name, patch, "status");
      }
    }),
  );
  await sleep(500);
  const [api1, etcd1] = cpu();
  const obj = await resolver.get<ResolutionRequest>(resolutionRequests, ns, "r-0");
  stop.abort();
  await Promise.allSettled(watches);
  await scn.cleanup();
  return {
    apiserverMs: ((api1 - api0) * 1000) / sizes.n,
    etcdMs: ((etcd1 - etcd0) * 1000) / sizes.n,
    objectBytes: JSON.stringify(obj).length,
    managedFieldsBytes: JSON.stringify((obj.metadata as { managedFields?: unknown[] }).managedFields ?? [])
      .length,
  };
}

const r2 = (x: number) => round(x, 2);

await runBenchmark({
  name: "api-shape",
  about: "What a request's shape costs kube-apiserver and etcd, no controller running.",
  deadline: 600,
  flags: {
    requests: { type: "int", default: 400, min: 1, help: "requests per shape and round" },
    concurrency: { type: "int", default: 16, min: 1, help: "clients" },
    rounds: { type: "int", default: 3, min: 1, help: "rounds over every shape" },
  },
  setup: (ctx) => ctx.controlPlane(),
  phases: (ctx, plane) =>
    onePhase("shapes", async () => {
      const sizes = { n: ctx.flags.requests, concurrency: ctx.flags.concurrency, signal: ctx.signal };
      const trials = new Map<string, Trial[]>(SHAPES.map((s) => [s.name, []]));
      for (let round = 1; round <= ctx.flags.rounds && !ctx.signal.aborted; round++) {
        for (const shape of SHAPES) {
          const t = await trial(plane, shape, sizes);
          trials.get(shape.name)?.push(t);
          log(
            `round ${round}, ${shape.name}: apiserver ${r2(t.apiserverMs)} ms/request, etcd ${r2(t.etcdMs)}`,
          );
        }
      }
      return trials;
    }),
  result(ctx, _s, [trials]) {
    const of = (name: string) => trials?.get(name) ?? [];
    const floorApi = median(of("floor").map((t) => t.apiserverMs));
    const shapes = SHAPES.map((s) => {
      const ts = of(s.name);
      const api = median(ts.map((t) => t.apiserverMs));
      return {
        name: s.name,
        watchers: s.watchers,
        apiserverMsPerRequest: { median: r2(api), all: ts.map((t) => r2(t.apiserverMs)) },
        etcdMsPerRequest: r2(median(ts.map((t) => t.etcdMs))),
        overFloorApiserverMs: r2(api - floorApi),
        objectBytes: ts[0]?.objectBytes,
        managedFieldsBytes: ts[0]?.managedFieldsBytes,
      };
    });
    return {
      benchmark: "api-shape",
      date: new Date().toISOString(),
      requests: ctx.flags.requests,
      rounds: ctx.flags.rounds,
      shapes,
    };
  },
  report(r) {
    const md = columns<(typeof r.shapes)[number]>(
      [
        ["shape", (s) => s.name],
        ["watchers", (s) => s.watchers],
        [
          "apiserver ms/request (median; rounds)",
          ({ apiserverMsPerRequest: a }) => `${a.median} (${a.all.join(", ")})`,
        ],
        ["over the floor's", (s) => s.overFloorApiserverMs],
        ["etcd ms/request", (s) => s.etcdMsPerRequest],
        ["object bytes (managedFields)", (s) => `${s.objectBytes} (${s.managedFieldsBytes})`],
      ],
      r.shapes,
    );
    return valueReport(
      [["api-shape", `${r.requests} requests per shape and round, ${r.rounds} rounds`]],
      md.header,
      md.rows,
    );
  },
  ok: (r, ctx) => r.shapes.every((s) => s.apiserverMsPerRequest.all.length === ctx.flags.rounds),
});
