// The fleet the dashboard screenshot watches: the embedded control plane (etcd + kube-apiserver),
// Quarry's services as real processes in namespace quarry-system under their charts' RBAC (two
// git-resolver replicas sharing four leader-election buckets), a smart-HTTP git server, an OCI
// registry holding a Tekton bundle pushed with tkn, an HTTP server with Task files for the http
// resolver, the hub protocol fixture holding Tasks on both hub APIs for the hub resolver, Tasks for
// the cluster resolver, and the Wait custom task for runs. All servers listen on loopback.
// Everything stops with `stop()`.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { applyObject } from "@quarry/devcluster/apply";
import { startControlPlane } from "@quarry/devcluster/controlplane";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { createServiceIdentity } from "@quarry/devcluster/identity";
import { installQuarryApi, installTektonCrds } from "@quarry/devcluster/install";
import { type Registry, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import { type RunningService, startService } from "@quarry/devcluster/service";
import { type HttpFixture, startHttpFixture } from "@quarry/harness/http-server";
import { type HubFixture, startHubFixture } from "@quarry/harness/hub-fixture";
import { childProcesses } from "@quarry/harness/procs";
import { type KubeClient, RestKubeClient } from "@quarry/kube";
import type { Target } from "./prometheus.ts";
import { type BoundedRun, log, sleep } from "./run.ts";

const SYSTEM_NAMESPACE = "quarry-system";
export const TENANTS = ["team-a", "team-b"] as const;
export const TASKS = ["build", "test", "lint", "release"] as const;
export const BUNDLE_TASKS = ["build", "scan"] as const;
/** Versions of every Task on both hubs of the fixture (Artifact Hub's spelling; Tekton Hub drops the patch). */
export const HUB_VERSIONS = ["0.1.0", "0.2.0"] as const;
/** The catalogs the hub resolver asks when a request names none (Tekton's shipped defaults). */
export const HUB_CATALOGS = { artifact: "tekton-catalog-tasks", tekton: "Tekton" } as const;
const GIT_BUCKETS = 4;

/** The chart services this fleet runs, each with its replica count. */
const SERVICES: Record<string, number> = {
  "lifecycle-controller": 1,
  "run-controller": 1,
  "git-resolver": 2,
  "bundle-resolver": 1,
  "cluster-resolver": 1,
  "pipe-resolver": 1,
  "http-resolver": 1,
  "hub-resolver": 1,
};

export interface Replica {
  service: string;
  pod: string;
  svc: RunningService;
}

export interface Fleet {
  admin: KubeClient;
  git: GitServer;
  repo: RepoBuilder;
  repoUrl: string;
  registry: Registry;
  bundleRef: string;
  bundleDigestRef: string;
  /** The HTTP server serving /tasks/<task>.yaml for the http resolver. */
  web: HttpFixture;
  /** The hub fixture (Artifact Hub and Tekton Hub APIs) the hub resolver's env names. */
  hub: HubFixture;
  replicas: Replica[];
  /** Starts one more replica of `service` (same identity and env as the first). */
  addReplica(service: string): Promise<Replica>;
  targets(): Target[];
  stop(): Promise<void>;
}

/** A pod name as a Deployment's ReplicaSet would make it: quarry-<service>-<hash>-<suffix>. */
function podName(service: string, hash: string): string {
  return `quarry-${service}-${hash}-${randomBytes(3).toString("hex").slice(0, 5)}`;
}

export async function startFleet(run: BoundedRun, dir: string): Promise<Fleet> {
  const stops: (() => Promise<unknown>)[] = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => log(`teardown: ${String(err)}`));
  };
  try {
    const cp = await startControlPlane({ log: (m) => log(`controlplane: ${m}`) });
    stops.push(() => cp.stop());
    // its etcd and kube-apiserver, the only children so far
    for (const { pid } of childProcesses(process.pid)) run.track(pid);
    const admin = RestKubeClient.fromEnvironment(cp.adminKubeconfig);
    await installQuarryApi(admin);
    await installTektonCrds(admin);
    for (const ns of [SYSTEM_NAMESPACE, ...TENANTS]) {
      await applyObject(admin, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }

    const git = await startGitServer({ root: join(dir, "git") });
    stops.push(() => git.stop());
    const repo = await RepoBuilder.create(git.root, "catalog.git");
    stops.push(async () => repo.dispose());
    for (const t of TASKS) repo.write(`tasks/${t}.yaml`, taskYaml(t, "v1"));
    await repo.commit("catalog v1");
    await repo.tag("v1");
    await repo.push();
    const repoUrl = git.url(repo.name);

    const registry = await startRegistry();
    stops.push(() => registry.dispose());
    const bundleRef = registry.ref("catalog/ci:v1");
    const { digest } = await tknBundlePush(
      bundleRef,
      BUNDLE_TASKS.map((t) => taskYaml(t, "bundle")),
    );
    const bundleDigestRef = registry.ref(`catalog/ci@${digest}`);

    const web = await startHttpFixture();
    stops.push(() => web.close());
    for (const t of TASKS) {
      const body = taskYaml(t, "http");
      web.route(`/tasks/${t}.yaml`, (_req, res) =>
        res.writeHead(200, { "content-type": "text/yaml" }).end(body),
      );
    }
    const hub = await startHubFixture();
    stops.push(() => hub.close());
    for (const [type, catalog] of Object.entries(HUB_CATALOGS) as [keyof typeof HUB_CATALOGS, string][])
      for (const t of TASKS)
        hub.add({
          hub: type,
          catalog,
          kind: "task",
          name: t,
          versions: HUB_VERSIONS.map((v) => ({
            version: type === "tekton" ? v.split(".").slice(0, 2).join(".") : v,
            yaml: taskYaml(t, `hub ${v}`),
          })),
        });

    for (const ns of TENANTS) for (const t of TASKS) await applyObject(admin, taskObject(ns, t));
    const config = (name: string, data: Record<string, string>) =>
      applyObject(admin, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: SYSTEM_NAMESPACE },
        data,
      });
    // short deadlines, so what goes wrong ends within the run
    await config("lifecycle-controller-config", { "default-maximum-resolution-timeout": "20s" });
    await config("git-resolver-config", {
      "allowed-urls": `${git.baseUrl.replaceAll(".", "\\.")}/.*`,
      "max-attempts": "3",
      "fetch-timeout": "10s",
    });
    await config("bundleresolver-config", {
      "allowed-repositories": `${registry.host.replaceAll(".", "\\.")}/catalog/.*`,
    });
    await config("run-controller-config", { "initial-update-timeout": "10s", "enforcement-grace": "5s" });
    await config("http-resolver-config", { "fetch-timeout": "10s" });

    const hashes = new Map<string, string>();
    const identities = new Map<string, string>();
    const replicas: Replica[] = [];
    const start = async (service: string): Promise<Replica> => {
      let kubeconfig = identities.get(service);
      if (!kubeconfig) {
        kubeconfig = (await createServiceIdentity(admin, cp, service, SYSTEM_NAMESPACE)).kubeconfig;
        identities.set(service, kubeconfig);
      }
      if (!hashes.has(service)) hashes.set(service, randomBytes(5).toString("hex").slice(0, 9));
      const pod = podName(service, hashes.get(service)!);
      const env: Record<string, string> = {
        QUARRY_SYSTEM_NAMESPACE: SYSTEM_NAMESPACE,
        QUARRY_WATCH_NAMESPACE: "",
        LOG_LEVEL: "info",
        POD_NAME: pod,
        // as the charts set it: leader election on, one bucket unless scaled out
        QUARRY_LEADER_ELECTION: "on",
        QUARRY_BUCKETS: service === "git-resolver" ? String(GIT_BUCKETS) : "1",
      };
      if (service === "git-resolver") env.QUARRY_GIT_CACHE_DIR = join(dir, `git-cache-${pod}`);
      if (service === "pipe-resolver") env.QUARRY_SERVICE_ACCOUNT = "quarry-pipe-resolver";
      // as the chart's Deployment env names the hubs (Tekton's ARTIFACT_HUB_API, TEKTON_HUB_API)
      if (service === "hub-resolver")
        Object.assign(env, { ARTIFACT_HUB_API: hub.base, TEKTON_HUB_API: hub.base });
      const svc = await startService(service, {
        kubeconfig,
        logFile: join(dir, "logs", `${pod}.log`),
        env,
        waitReady: false,
      });
      run.track(svc.pid);
      stops.push(() => svc.stop());
      await ready(svc);
      const replica = { service, pod, svc };
      replicas.push(replica);
      log(`${pod} pid ${svc.pid} ops port ${svc.opsPort}`);
      return replica;
    };
    mkdirSync(join(dir, "logs"), { recursive: true });
    // two at a time: nine Node processes starting at once on two busy cores miss any sane deadline
    const queue = Object.entries(SERVICES).flatMap(([service, n]) =>
      Array.from({ length: n }, () => service),
    );
    await Promise.all(
      [0, 1].map(async () => {
        for (let s = queue.shift(); s; s = queue.shift()) await start(s);
      }),
    );
    // the Wait custom task (examples/wait-task): the runs need it, the dashboard does not watch it
    const waitId = await createServiceIdentity(admin, cp, "wait-task", SYSTEM_NAMESPACE);
    const waitTask = await startService("wait-task", {
      kubeconfig: waitId.kubeconfig,
      logFile: join(dir, "logs", "wait-task.log"),
      env: { QUARRY_SYSTEM_NAMESPACE: SYSTEM_NAMESPACE, QUARRY_WATCH_NAMESPACE: "", LOG_LEVEL: "info" },
      waitReady: false,
    });
    run.track(waitTask.pid);
    stops.push(() => waitTask.stop());
    await ready(waitTask);

    return {
      admin,
      git,
      repo,
      repoUrl,
      registry,
      bundleRef,
      bundleDigestRef,
      web,
      hub,
      replicas,
      addReplica: start,
      targets: () =>
        replicas.map((r) => ({
          port: r.svc.opsPort,
          labels: {
            job: `quarry-${r.service}-metrics`,
            namespace: SYSTEM_NAMESPACE,
            service: `quarry-${r.service}-metrics`,
            pod: r.pod,
            container: r.service,
            endpoint: "metrics",
          },
        })),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Until /readyz answers 200; fails at once if the process exits, after 3 minutes if it hangs. */
async function ready(svc: RunningService): Promise<void> {
  let exited = false;
  void svc.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (exited) throw new Error(`${svc.name} exited before it was ready; log:\n${svc.logs().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${svc.name} not ready within 180s`);
    const status = await svc.ops("/readyz").then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await sleep(200);
  }
}

export function taskYaml(name: string, version: string): string {
  return `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: ${name}
spec:
  steps:
    - name: ${name}
      image: busybox
      script: echo "${name} ${version}"
`;
}

function taskObject(namespace: string, name: string) {
  return {
    apiVersion: "tekton.dev/v1",
    kind: "Task",
    metadata: { name, namespace },
    spec: { steps: [{ name, image: "busybox", script: `echo "${name} from the cluster"` }] },
  };
}
