// The traffic behind the dashboard screenshot: ResolutionRequests of every served type (and one
// nobody serves) at a rate that varies over the run, a mix of answers that succeed and that fail
// (paths, names, Tasks and hub versions that do not exist, sources the config forbids), commits
// pushed to the catalog now and then, Wait runs and runs of a kind no controller serves. Along the
// way, what an operator meets in production: a slow git server, a burst of requests, a git server
// answering 503 for a while, and one git-resolver replica stopped and later replaced (its buckets
// move).
// Finished requests and runs are deleted, as Tekton Pipelines deletes its own.
import { randomBytes } from "node:crypto";
import {
  type AnyRun,
  customRuns,
  getCondition,
  LABEL_RESOLVER_TYPE,
  type ResolutionRequest,
  resolutionRequests,
  runs,
} from "@quarry/api";
import { createRun, runObject, WAIT_REF } from "@quarry/harness/runs";
import { newRequest } from "@quarry/harness/scenario";
import { BUNDLE_TASKS, type Fleet, HUB_VERSIONS, TASKS, TENANTS, taskYaml } from "./fleet.ts";
import { log, sleep } from "./run.ts";

/** What happened when, for the report (seconds since the workload started). */
export interface Incident {
  at: number;
  what: string;
}

type Make = (ns: string, f: Fleet) => { type: string; params: Record<string, string> };
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

/** Relative weights of the request kinds: mostly successes, a trickle of failures (about 8 %). */
const MIX: [number, Make][] = [
  [
    22,
    (_, f) => ({
      type: "git",
      params: { url: f.repoUrl, revision: "main", pathInRepo: `tasks/${pick(TASKS)}.yaml` },
    }),
  ],
  [
    12,
    (_, f) => ({
      type: "git",
      params: { url: f.repoUrl, revision: "v1", pathInRepo: `tasks/${pick(TASKS)}.yaml` },
    }),
  ],
  [
    2,
    (_, f) => ({
      type: "git",
      params: { url: f.repoUrl, revision: "main", pathInRepo: "tasks/deploy.yaml" },
    }),
  ],
  [
    1,
    () => ({
      type: "git",
      params: { url: "https://git.example.com/ci/tasks.git", pathInRepo: "tasks/build.yaml" },
    }),
  ],
  [
    12,
    (_, f) => ({ type: "bundles", params: { bundle: f.bundleRef, name: pick(BUNDLE_TASKS), kind: "task" } }),
  ],
  [
    8,
    (_, f) => ({
      type: "bundles",
      params: { bundle: f.bundleDigestRef, name: pick(BUNDLE_TASKS), kind: "task" },
    }),
  ],
  [1.5, (_, f) => ({ type: "bundles", params: { bundle: f.bundleRef, name: "deploy", kind: "task" } })],
  [
    1,
    (_, f) => ({
      type: "bundles",
      params: { bundle: f.registry.ref("other/tools:v1"), name: "x", kind: "task" },
    }),
  ],
  [24, () => ({ type: "cluster", params: { kind: "task", name: pick(TASKS) } })],
  [1.5, () => ({ type: "cluster", params: { kind: "task", name: "deploy" } })],
  [0.5, () => ({ type: "cluster", params: { kind: "widget", name: "build" } })],
  [1, () => ({ type: "pipe", params: { pipe: "self-signed", cn: "ci.example.test" } })],
  [6, (_, f) => ({ type: "http", params: { url: `${f.web.base}/tasks/${pick(TASKS)}.yaml` } })],
  [0.5, (_, f) => ({ type: "http", params: { url: `${f.web.base}/tasks/deploy.yaml` } })],
  // Artifact Hub by exact version and by constraint, Tekton Hub by major.minor; a version no hub lists
  [3, () => ({ type: "hub", params: { name: pick(TASKS), version: pick(HUB_VERSIONS) } })],
  [1.5, () => ({ type: "hub", params: { name: pick(TASKS), version: ">= 0.1, < 1.0" } })],
  [1.5, () => ({ type: "hub", params: { type: "tekton", name: pick(TASKS), version: "0.2" } })],
  [0.5, () => ({ type: "hub", params: { name: pick(TASKS), version: "9.9.9" } })],
  // a type no Quarry resolver serves: times out with "no resolver for type tarball answered"
  [1, () => ({ type: "tarball", params: { url: "https://example.invalid/tasks.tgz", path: "build.yaml" } })],
];
const TOTAL_WEIGHT = MIX.reduce((s, [w]) => s + w, 0);

function makeRequest(f: Fleet, seq: number): ResolutionRequest {
  let r = Math.random() * TOTAL_WEIGHT;
  let make = MIX[0]![1];
  for (const [w, m] of MIX) {
    r -= w;
    if (r < 0) {
      make = m;
      break;
    }
  }
  const ns = pick(TENANTS);
  const { type, params } = make(ns, f);
  return newRequest(
    ns,
    `${type}-${seq}-${randomBytes(2).toString("hex")}`,
    { [LABEL_RESOLVER_TYPE]: type },
    params,
  );
}

/** Requests per second at fraction `x` (0..1) of the run: a quiet start, a busy middle. */
function rateAt(x: number): number {
  const base = 2 + 2.5 * Math.exp(-(((x - 0.5) / 0.18) ** 2));
  return base * (1 + 0.15 * Math.sin(x * 40));
}

/** `onReplicas` is called after a replica was stopped or added (the scrape targets follow). */
export async function runWorkload(
  f: Fleet,
  durationS: number,
  signal: AbortSignal,
  onReplicas: () => void,
): Promise<{ incidents: Incident[]; endedAt: number }> {
  const incidents: Incident[] = [];
  const t0 = Date.now();
  const at = () => (Date.now() - t0) / 1000;
  const note = (what: string) => {
    incidents.push({ at: Math.round(at()), what });
    log(`t=${Math.round(at())}s: ${what}`);
  };
  let seq = 0;
  let creating = 0;
  let failedCreates = 0;
  const create = (rr: ResolutionRequest) => {
    if (creating >= 64) return; // the apiserver is the bottleneck: drop rather than pile up
    creating++;
    f.admin
      .create(resolutionRequests, rr)
      .catch(() => failedCreates++)
      .finally(() => creating--);
  };

  // the script of the run, by fraction of its duration
  const events: [number, () => Promise<void> | void][] = [
    [
      0.2,
      () => {
        f.git.setLatency(400);
        note("git server slow: +400 ms per response");
      },
    ],
    [
      0.3,
      () => {
        f.git.setLatency(0);
        note("git server fast again");
      },
    ],
    [
      0.4,
      () => {
        note("burst: 200 requests at once (cluster and git)");
        for (let i = 0; i < 200; i++) {
          const ns = pick(TENANTS);
          const rr =
            i % 3 === 0
              ? newRequest(
                  ns,
                  `burst-git-${i}`,
                  { [LABEL_RESOLVER_TYPE]: "git" },
                  {
                    url: f.repoUrl,
                    revision: "main",
                    pathInRepo: `tasks/${pick(TASKS)}.yaml`,
                  },
                )
              : newRequest(
                  ns,
                  `burst-cluster-${i}`,
                  { [LABEL_RESOLVER_TYPE]: "cluster" },
                  {
                    kind: "task",
                    name: pick(TASKS),
                  },
                );
          void f.admin.create(resolutionRequests, rr).catch(() => failedCreates++);
        }
      },
    ],
    [
      0.55,
      () => {
        f.git.setFailure(503);
        note("git server answers 503 (outage)");
      },
    ],
    [
      0.62,
      () => {
        f.git.setFailure(undefined);
        note("git server back");
      },
    ],
    [
      0.7,
      async () => {
        const victim = f.replicas.find((r) => r.service === "git-resolver" && r.svc.pid > 0)!;
        note(`SIGTERM ${victim.pod} (its buckets move to the other replica)`);
        // out of the scrape targets first, as a terminating pod leaves its Service's endpoints
        f.replicas.splice(f.replicas.indexOf(victim), 1);
        onReplicas();
        await victim.svc.stop();
      },
    ],
    [
      0.8,
      async () => {
        const r = await f.addReplica("git-resolver");
        onReplicas();
        note(`new replica ${r.pod} started (buckets rebalance)`);
      },
    ],
  ];

  const background: Promise<unknown>[] = [];
  // commits to main every 75 s: the next resolution of main fetches anew
  background.push(
    (async () => {
      for (let v = 2; !signal.aborted; v++) {
        await sleep(75_000);
        if (signal.aborted || at() > durationS) break;
        for (const t of TASKS) f.repo.write(`tasks/${t}.yaml`, taskYaml(t, `v${v}`));
        await f.repo.commit(`catalog v${v}`);
        await f.repo.push();
      }
    })(),
  );
  // runs: a Wait every 4 s, a CustomRun of a kind nobody serves every 45 s, such a Run every 100 s
  background.push(
    (async () => {
      for (let i = 0; !signal.aborted && at() < durationS; i++) {
        const ns = pick(TENANTS);
        const seconds = 1 + Math.floor(Math.random() * 4);
        void createRun(
          f.admin,
          runObject("CustomRun", ns, {
            name: `wait-${i}`,
            ref: WAIT_REF,
            params: [{ name: "duration", value: `${seconds}s` }],
          }),
        ).catch(() => {});
        if (i % 11 === 5)
          void createRun(
            f.admin,
            runObject("CustomRun", ns, {
              name: `deploy-${i}`,
              ref: { apiVersion: "example.dev/v1", kind: "Deploy" },
            }),
          ).catch(() => {});
        if (i % 25 === 12)
          void createRun(
            f.admin,
            runObject("Run", ns, {
              name: `approve-${i}`,
              ref: { apiVersion: "example.dev/v1", kind: "Approval" },
            }),
          ).catch(() => {});
        await sleep(4_000);
      }
    })(),
  );
  background.push(sweep(f, signal, () => at() > durationS + 30));

  let owed = 0;
  let last = at();
  let next = 0;
  while (!signal.aborted && at() < durationS) {
    const now = at();
    while (next < events.length && now >= events[next]![0] * durationS) await events[next++]![1]();
    owed += rateAt(now / durationS) * (now - last);
    last = now;
    for (; owed >= 1; owed--) create(makeRequest(f, seq++));
    await sleep(100);
  }
  const endedAt = Date.now() / 1000;
  log(`workload done: ${seq} requests (${failedCreates} creates failed)`);
  await Promise.all(background);
  return { incidents, endedAt };
}

/** Deletes requests and runs that finished over 15 s ago, every 10 s, until `done()`. */
async function sweep(f: Fleet, signal: AbortSignal, done: () => boolean): Promise<void> {
  while (!signal.aborted && !done()) {
    await sleep(10_000);
    const cutoff = Date.now() - 15_000;
    for (const ns of TENANTS) {
      for (const rt of [resolutionRequests, customRuns, runs]) {
        const list = await f.admin.list<ResolutionRequest | AnyRun>(rt, ns).catch(() => undefined);
        for (const o of list?.items ?? []) {
          const c = getCondition(o as AnyRun, "Succeeded");
          const ended = c && c.status !== "Unknown" && Date.parse(c.lastTransitionTime ?? "") < cutoff;
          if (ended) void f.admin.delete(rt, ns, o.metadata.name!).catch(() => {});
        }
      }
    }
  }
}
