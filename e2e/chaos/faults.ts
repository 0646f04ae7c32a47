// The faults, one at a time: SIGKILL each service in turn (restarted as a
// kubelet would), restart kube-apiserver, freeze etcd (SIGSTOP), take the git
// server and the registry down, and last freeze every open connection between
// each service and the apiserver: the fleet must serve requests and runs again
// without a restart (probes, checked while the suite waits for the load to end, since
// the recovery takes up to a minute). How long each lasts depends on the form.
import { setTimeout as sleep } from "node:timers/promises";
import { getRun, runDone } from "@quarry/harness/runs";
import { getRequest, newRequest, succeeded } from "@quarry/harness/scenario";
import { createWithRetry, isRun, KINDS, launch, type PlannedRun, planItem } from "./load.ts";
import {
  CHAOS_PIPE,
  type ChaosWorld,
  clusterTask,
  HUB_TASK,
  HUB_VERSIONS,
  type ServiceName,
  webPath,
} from "./world.ts";

export interface FaultTimings {
  /** How long a SIGKILLed service stays down before it is started again. */
  killedDownMs: number;
  etcdFrozenMs: number;
  gitDownMs: number;
  registryDownMs: number;
  /** How long every service may take to serve requests again after its connections froze. */
  stallRecoveryMs: number;
  /** How long the load runs on after the freeze before the suite moves on to waiting. */
  stallWindowMs: number;
}

export interface FaultReport {
  /** What the fault found (figures for the report). */
  note(detail: string): void;
  /** A property the fault checks did not hold. */
  problem(detail: string): void;
  /** Work the fault leaves running (a recovery check); the suite awaits it before judging. */
  background(work: Promise<void>): void;
}

export interface Fault {
  name: string;
  /** Roughly how long run() takes, to pace the fault's share of the load over it. */
  expectedMs(t: FaultTimings): number;
  run(world: ChaosWorld, t: FaultTimings, report: FaultReport): Promise<void>;
}

/** Requests that need the lifecycle controller and one resolver each, to see that all of them answer. */
const PROBES = [
  ["git", { url: "", revision: "", pathInRepo: "task.yaml" }],
  ["bundles", { bundle: "", name: "build", kind: "task" }],
  ["cluster", { kind: "task", name: clusterTask(0) }],
  ["http", { url: "" }],
  ["hub", { type: "artifact", name: HUB_TASK, version: HUB_VERSIONS[0]! }],
] as const;

/**
 * A Wait run whose definition comes from git: it needs the run-controller (which creates its
 * request), the lifecycle controller, the git resolver and wait-task.
 */
function probeRun(world: ChaosWorld, tag: string): PlannedRun {
  const item = planItem(world, `probe-${tag}`, KINDS.indexOf("wait-git-ref"));
  if (!isRun(item)) throw new Error("the probe must be a run");
  return item;
}

/**
 * Creates one probe per resolver and one run through the run-controller and wait-task, and waits
 * until each has ended; returns the milliseconds it took.
 */
async function probeUntilAnswered(
  world: ChaosWorld,
  tag: string,
  timeoutMs: number,
): Promise<number | undefined> {
  const t0 = Date.now();
  const { admin, namespace } = world.scn;
  const probes: [string, Record<string, string>][] = PROBES.map(([type, params]) => [type, { ...params }]);
  if (world.node) probes.push(["pipe", { pipe: CHAOS_PIPE, n: "probe" }]);
  const names = probes.map(([type, p]) => {
    const name = `probe-${tag}-${type}`;
    if (type === "git") Object.assign(p, { url: world.git.url(world.repo.name), revision: world.repo.first });
    if (type === "bundles") p.bundle = world.bundleDigest;
    if (type === "http") p.url = `${world.web.base}${webPath(0)}`;
    return { name, rr: newRequest(namespace, name, { "resolution.tekton.dev/type": type }, p) };
  });
  const run = probeRun(world, tag);
  await Promise.all([
    ...names.map(({ rr }) => createWithRetry(world, rr, t0 + timeoutMs)),
    launch(world, run, t0 + timeoutMs),
  ]);
  while (Date.now() - t0 < timeoutMs) {
    const ended = await Promise.all([
      ...names.map(({ name }) =>
        getRequest(admin, namespace, name).then(
          (rr) => (succeeded(rr)?.status ?? "Unknown") !== "Unknown",
          () => false,
        ),
      ),
      getRun(admin, run.flavour, namespace, run.name).then(runDone, () => false),
    ]);
    if (ended.every(Boolean)) return Date.now() - t0;
    await sleep(500);
  }
  return undefined;
}

const sigkill = (name: ServiceName): Fault => ({
  name: `sigkill-${name}`,
  // down, then the restart until ready (a few seconds on a loaded machine)
  expectedMs: (t) => t.killedDownMs + 5_000,
  run: async (world, t) => {
    await world.kill(name);
    await sleep(t.killedDownMs);
    await world.start(name);
  },
});

/** The faults for a fleet (world.ts servicesOf): one SIGKILL per service, then the rest. */
export const faultsFor = (services: readonly ServiceName[]): Fault[] => [
  ...services.map(sigkill),
  {
    name: "apiserver-restart",
    expectedMs: () => 10_000,
    run: async (world) => {
      await world.cp.restartApiserver();
    },
  },
  {
    name: "etcd-sigstop",
    expectedMs: (t) => t.etcdFrozenMs,
    run: async (world, t) => {
      world.cp.signalEtcd("SIGSTOP");
      try {
        await sleep(t.etcdFrozenMs);
      } finally {
        world.cp.signalEtcd("SIGCONT");
      }
    },
  },
  {
    name: "git-server-down",
    expectedMs: (t) => t.gitDownMs,
    run: async (world, t) => {
      await world.git.down();
      try {
        await sleep(t.gitDownMs);
      } finally {
        await world.git.up();
      }
    },
  },
  {
    name: "registry-down",
    expectedMs: (t) => t.registryDownMs,
    run: async (world, t) => {
      await world.registry.stop();
      try {
        await sleep(t.registryDownMs);
      } finally {
        await world.registry.start();
      }
    },
  },
  {
    name: "watch-stall",
    expectedMs: (t) => t.stallWindowMs,
    // last, and its recovery checked in the background while the suite waits for the load to end
    run: async (world, t, report) => {
      const frozen = [...world.proxies].map(([name, p]) => `${name} ${p.stall()} of ${p.accepted}`);
      report.background(stallRecovery(world, t, report, frozen));
      await sleep(t.stallWindowMs);
    },
  },
];

/** Probes until every service answers again after the freeze, and reports how long that took. */
async function stallRecovery(world: ChaosWorld, t: FaultTimings, report: FaultReport, frozen: string[]) {
  const ms = await probeUntilAnswered(world, "stall", t.stallRecoveryMs);
  const accepted = [...world.proxies].map(([name, p]) => `${name} ${p.accepted}`);
  report.note(
    `connections frozen: ${frozen.join(", ")}; every service answered again after ${
      ms === undefined ? "never" : `${Math.round(ms / 100) / 10} s`
    }; connections accepted by then: ${accepted.join(", ")}`,
  );
  if (ms === undefined)
    report.problem(
      `the fleet did not answer within ${t.stallRecoveryMs / 1000} s of its connections freezing`,
    );
}
