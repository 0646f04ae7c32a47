// The chaos suite's world, on a control plane of its own (the suite restarts
// kube-apiserver and freezes etcd, which must not disturb other scenarios):
// one namespace with the lifecycle controller, the git, bundles, cluster, http
// and hub resolvers, the run-controller and the Wait custom task (wait-task) as
// real processes under their shipped RBAC, each talking to the
// apiserver through its own stall proxy; a real git smart-HTTP server with the
// standard repository, a real registry with one bundle (by tag and by digest),
// Tasks for the cluster resolver, a loopback web server with Tasks for the http
// resolver, and the hub protocol fixture (Artifact Hub and Tekton Hub) as both
// hubs of the hub resolver. With pipes (the full form), a real node
// (dev/devcluster/src/node.ts) joins this control plane and the pipe resolver
// joins the fleet, with one Pipe whose pod echoes a param into a ConfigMap.
// In all-in-one mode (QUARRY_E2E_MODE) the lifecycle controller, the resolvers
// and the run-controller are components of one services/all-in-one process
// with one stall proxy, and the SIGKILL fault kills that process (all of them
// at once); wait-task, no component, stays a process of its own.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeStrategies, pipes } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { buildStandardRepo, type StandardRepo } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { installQuarryApi, installTektonCrds } from "@quarry/devcluster/install";
import { startNode, type TestNode } from "@quarry/devcluster/node";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { craneDigest, type Registry, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import type { RunningService } from "@quarry/devcluster/service";
import { TASK_YAML } from "@quarry/harness/bundle-scenario";
import { adminClient, e2eMode } from "@quarry/harness/env";
import { type HttpFixture, startHttpFixture, task } from "@quarry/harness/http-server";
import { type HubFixture, startHubFixture } from "@quarry/harness/hub-fixture";
import { hubTask } from "@quarry/harness/hub-scenario";
import {
  configMapOutputs,
  nodeConfig,
  pipeObject,
  pipeStrategy,
  scriptPod,
} from "@quarry/harness/pipe-scenario";
import {
  newScenario,
  type Scenario,
  setConfig,
  setLifecycleConfig,
  taskManifest,
} from "@quarry/harness/scenario";
import { type StallProxy, startStallProxy } from "./stall-proxy.ts";

/** The services under chaos, in the order the SIGKILL fault visits them. */
export const SERVICES = [
  "lifecycle-controller",
  "git-resolver",
  "bundle-resolver",
  "cluster-resolver",
  "http-resolver",
  "hub-resolver",
  "run-controller",
  // the Wait custom task: the controller that starts and ends the suite's runs
  "wait-task",
] as const;
/** The pipe resolver, in the fleet when the world has a node. */
export const PIPE_RESOLVER = "pipe-resolver";
/** In all-in-one mode: the one process whose components are the services but wait-task. */
export const ALL_IN_ONE = "all-in-one";
export type ServiceName = (typeof SERVICES)[number] | typeof PIPE_RESOLVER | typeof ALL_IN_ONE;
type Component = Exclude<ServiceName, "wait-task" | typeof ALL_IN_ONE>;

/** The services in the all-in-one process of a world with or without pipes. */
const componentsOf = (pipes: boolean): Component[] => {
  const out: Component[] = [];
  for (const s of SERVICES) if (s !== "wait-task") out.push(s);
  if (pipes) out.push(PIPE_RESOLVER);
  return out;
};

/**
 * The processes of a world with or without pipes, in the order the SIGKILL fault visits them:
 * each service in the fleet mode; the all-in-one process and wait-task in all-in-one mode.
 */
export const servicesOf = (pipes: boolean, allInOne = e2eMode() === "all-in-one"): readonly ServiceName[] =>
  allInOne ? [ALL_IN_ONE, "wait-task"] : pipes ? [...SERVICES, PIPE_RESOLVER] : SERVICES;

/** The Pipe every pipe request of the load names: its pod writes the request's `n` param to a ConfigMap. */
export const CHAOS_PIPE = "chaos";

/** Tasks the cluster workload reads (request i reads CLUSTER_TASK(i)). */
export const CLUSTER_TASKS = 10;
export const clusterTask = (i: number) => `chaos-task-${i % CLUSTER_TASKS}`;

/** Files on the web server the http workload reads (request i reads webPath(i)), each a Task. */
export const WEB_FILES = 5;
export const webPath = (i: number) => `/tasks/chaos-web-${i % WEB_FILES}.yaml`;
export const webBody = (i: number) => task(`chaos-web-${i % WEB_FILES}`);

/**
 * The Task both hubs hold, at these versions as requested: Tekton Hub lists them so, Artifact Hub
 * as `<v>.0` (the resolver fetches `0.2` as `0.2.0`).
 */
export const HUB_TASK = "chaos-hub";
export const HUB_VERSIONS = ["0.1", "0.2", "0.3"];
/** The Task's YAML as a hub serves it, marked with the hub and the version it serves. */
export const hubYaml = (hub: "artifact" | "tekton", version: string) =>
  hubTask(HUB_TASK, `${hub}-${hub === "artifact" ? `${version}.0` : version}`);

/**
 * The watch watchdog the services run with (QUARRY_WATCH_WATCHDOG): short, so a frozen watch is
 * restarted within the suite's time; an idle watch (no event, no bookmark) restarts as often,
 * which costs one request each.
 */
export const DEFAULT_WATCHDOG = "15s";

/**
 * The global timeout: longer than the whole run, so a request the fleet lost shows up as never
 * terminal rather than as a ResolutionTimedOut that looks like an answer.
 */
export const GLOBAL_TIMEOUT = "20m";

/**
 * The run-controller's initial-update timeout, for the same reason: a run nobody started shows up
 * as never terminal rather than as a ControllerNotFound.
 */
export const INITIAL_UPDATE_TIMEOUT = "20m";

/** How long a (re)started service may take to answer /readyz. */
const READY_TIMEOUT_MS = 120_000;

export interface ChaosWorld {
  cp: ControlPlane;
  scn: Scenario;
  git: GitServer;
  repo: StandardRepo;
  registry: Registry;
  bundleTag: string;
  bundleDigest: string;
  /** The http resolver's source: WEB_FILES Tasks at webPath(i). */
  web: HttpFixture;
  /** Artifact Hub and Tekton Hub (ARTIFACT_HUB_API and TEKTON_HUB_API both name it), holding HUB_TASK. */
  hub: HubFixture;
  /** The fleet (servicesOf). */
  services: readonly ServiceName[];
  /** The node pipe pods run on; undefined without pipes. */
  node: TestNode | undefined;
  /** The running process of each service (replaced when a fault restarts it). */
  current: Map<ServiceName, RunningService>;
  proxies: Map<ServiceName, StallProxy>;
  /** (Re)starts a service through its proxy. */
  start(name: ServiceName): Promise<RunningService>;
  /** SIGKILLs a service on purpose and waits for its exit (not counted as a crash). */
  kill(name: ServiceName): Promise<void>;
  /** Exits nobody asked for, with the log's tail; the service is started again (as a kubelet would). */
  crashes: string[];
  dispose(): Promise<void>;
}

export async function startChaosWorld(watchdog = DEFAULT_WATCHDOG, withPipes = false): Promise<ChaosWorld> {
  const cp = await startControlPlane({ keep: process.env.QUARRY_E2E_KEEP === "1" });
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  const proxies = new Map<ServiceName, StallProxy>();
  const current = new Map<ServiceName, RunningService>();
  const cacheDir = mkdtempSync(join(tmpdir(), "quarry-e2e-chaos-cache-"));
  let scn: Scenario | undefined;
  let git: GitServer | undefined;
  let repo: StandardRepo | undefined;
  let registry: Registry | undefined;
  let web: HttpFixture | undefined;
  let hub: HubFixture | undefined;
  let node: TestNode | undefined;
  const services = servicesOf(withPipes);
  const crashes: string[] = [];
  const onPurpose = new WeakSet<RunningService>();
  let stopping = false;
  const dispose = async () => {
    stopping = true;
    cp.signalEtcd("SIGCONT");
    await git?.up().catch(() => {});
    await scn?.cleanup().catch(() => {});
    await node?.stop();
    for (const p of proxies.values()) await p.close();
    repo?.builder.dispose();
    await git?.stop();
    await registry?.dispose();
    await web?.close();
    await hub?.close();
    rmSync(cacheDir, { recursive: true, force: true });
    await cp.stop();
  };
  try {
    const admin = adminClient(info);
    await installQuarryApi(admin);
    await installTektonCrds(admin);
    const s = await newScenario("chaos", { cp: info });
    scn = s;
    git = await startGitServer();
    repo = await buildStandardRepo(git.root);
    registry = await startRegistry();
    const bundleTag = registry.ref("chaos/task:v1");
    await tknBundlePush(bundleTag, [TASK_YAML]);
    const bundleDigest = `${registry.ref("chaos/task")}@${await craneDigest(bundleTag)}`;
    for (let i = 0; i < CLUSTER_TASKS; i++)
      await applyObject(s.admin, taskManifest(s.namespace, clusterTask(i)));
    const w = await startHttpFixture();
    web = w;
    for (let i = 0; i < WEB_FILES; i++) w.route(webPath(i), (_q, res) => res.end(webBody(i)));
    const h = await startHubFixture();
    hub = h;
    // the catalogs the resolver defaults to (hubresolver-config as Tekton ships it)
    for (const [kind, catalog] of [
      ["artifact", "tekton-catalog-tasks"],
      ["tekton", "Tekton"],
    ] as const)
      h.add({
        hub: kind,
        catalog,
        kind: "task",
        name: HUB_TASK,
        versions: HUB_VERSIONS.map((v) => ({
          version: kind === "artifact" ? `${v}.0` : v,
          yaml: hubYaml(kind, v),
        })),
      });
    await setLifecycleConfig(s, { "default-maximum-resolution-timeout": GLOBAL_TIMEOUT });
    await setConfig(s, "run-controller-config", { "initial-update-timeout": INITIAL_UPDATE_TIMEOUT });
    if (withPipes) {
      // the node talks to the apiserver directly: the faults reach it only through the apiserver's
      // restart and etcd's freeze
      node = await startNode(cp, { keep: process.env.QUARRY_E2E_KEEP === "1" });
      // a pod waits for a node that is busy with others: longer than any fault, shorter than the run
      await setConfig(s, "pipe-resolver-config", { ...nodeConfig(node), "pending-timeout": "5m" });
      await grantOptInRules(s, {
        service: PIPE_RESOLVER,
        rulesKey: "pipeNamespaceRules",
        role: "quarry-pipe-resolver-namespace",
      });
      await s.admin.create(
        pipeStrategies,
        pipeStrategy(
          s.namespace,
          CHAOS_PIPE,
          scriptPod(node.toolsImage, 'echo "$(params.n)" > /out/n'),
          [{ name: "n" }],
          { outputs: configMapOutputs("/out/n") },
        ),
      );
      await s.admin.create(
        pipes,
        pipeObject(s.namespace, CHAOS_PIPE, { kind: "PipeStrategy", name: CHAOS_PIPE }, [
          { file: "/out/n", kind: "ConfigMap", key: "n" },
        ]),
      );
    }

    const apiPort = Number(new URL(cp.server).port);
    const env: Record<Exclude<ServiceName, typeof ALL_IN_ONE>, Record<string, string>> = {
      "lifecycle-controller": {},
      "git-resolver": { QUARRY_GIT_CACHE_DIR: cacheDir },
      "bundle-resolver": {},
      "cluster-resolver": {},
      "http-resolver": {},
      // read once at start: a restarted resolver reads the same
      "hub-resolver": { ARTIFACT_HUB_API: h.base, TEKTON_HUB_API: h.base },
      "run-controller": {},
      "wait-task": {},
      "pipe-resolver": {},
    };
    const start = async (name: ServiceName) => {
      let proxy = proxies.get(name);
      if (!proxy) {
        proxy = await startStallProxy({ host: "127.0.0.1", port: apiPort });
        proxies.set(name, proxy);
      }
      // the process's own kubeconfig (its ServiceAccount's token), with the proxy as the server
      const components = componentsOf(withPipes);
      const id = name === ALL_IN_ONE ? await s.allInOne!.identity(components) : await s.identity(name);
      const proxied = join(cp.dir, `chaos-${name}.kubeconfig`);
      writeFileSync(proxied, readFileSync(id.kubeconfig, "utf8").split(cp.server).join(proxy.server));
      const common = {
        KUBECONFIG: proxied,
        QUARRY_WATCH_WATCHDOG: watchdog,
        // as the charts ship them: leader election on, one bucket; a restarted process keeps its
        // identity, as a container restarted in its pod keeps POD_NAME
        QUARRY_LEADER_ELECTION: "on",
        QUARRY_BUCKETS: "1",
        POD_NAME: `chaos-${name}`,
      };
      // a kubelet waits as long as it takes: on a machine shared with other runs, a restart's
      // imports alone took over 30 s (load average ~19 on 2 cores)
      const as = { readyTimeoutMs: READY_TIMEOUT_MS };
      let svc: RunningService;
      if (name === ALL_IN_ONE) {
        // every component's env in the one process's (the chart merges the services' env values so)
        await s.startAll(
          components,
          { ...Object.assign({}, ...components.map((c) => env[c])), ...common },
          as,
        );
        svc = s.allInOne!.process!;
      } else svc = await s.start(name, { ...env[name], ...common }, as);
      current.set(name, svc);
      void svc.exited.then(({ code, signal }) => {
        if (stopping || onPurpose.has(svc)) return;
        crashes.push(
          `${name} exited (code ${code}, signal ${signal}); log tail:\n${svc.logs().slice(-2000)}`,
        );
        void start(name).catch((err: unknown) => crashes.push(`${name} did not start again: ${String(err)}`));
      });
      return svc;
    };
    const kill = async (name: ServiceName) => {
      const svc = current.get(name);
      if (!svc) throw new Error(`${name} is not running`);
      onPurpose.add(svc);
      svc.kill("SIGKILL");
      await svc.exited;
    };
    for (const name of services) await start(name);
    return {
      cp,
      scn: s,
      git,
      repo,
      registry,
      bundleTag,
      bundleDigest,
      web: w,
      hub: h,
      services,
      node,
      current,
      proxies,
      start,
      kill,
      crashes,
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
