// Brings up the demo's cluster from @quarry/devcluster (dev/devcluster): the embedded
// control plane, a real node (in the background, node.ts), Quarry's API and
// stand-ins for Tekton's CRDs, two namespaces, a local git server, a local OCI
// registry holding a Tekton bundle, a web server and a hub protocol fixture
// (from @quarry/harness), and Quarry's services as real processes (services.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi, installTektonCrds, type RunCrdMode } from "@quarry/devcluster/install";
import { newScenario, type Scenario, setConfig, setLifecycleConfig } from "@quarry/devcluster/scenario";
import { type KubeClient, RestKubeClient } from "@quarry/kube";
import { BUNDLE_PIPELINE, BUNDLE_REPO, BUNDLE_TASK, type DemoBundle, startDemoRegistry } from "./bundles.ts";
import { childrenMentioning, stopPids } from "./children.ts";
import { type DemoRepo, HELLO_PATH, HELLO_TAG, startDemoGit } from "./git.ts";
import { type DemoHub, HUB_CATALOG, HUB_TASK, HUB_VERSIONS, startDemoHub } from "./hub.ts";
import type { Narrator } from "./narrator.ts";
import { type DemoNode, startDemoNode } from "./node.ts";
import { configurePipes } from "./pipe-objects.ts";
import { type DemoService, startDemoService } from "./services.ts";
import type { Teardown } from "./teardown.ts";
import { type DemoWeb, startDemoWeb } from "./web.ts";

export const DEMO_TIMEOUT = "5s";
/** The run-controller's initial-update-timeout in the demo: the unserved kind fails this soon. */
export const DEMO_INITIAL_UPDATE_TIMEOUT = "5s";
/** The Task the cluster resolver serves, created in the demo namespace before it starts. */
export const GREET_TASK = "greet";

export interface DemoCluster {
  cp: ControlPlane;
  admin: KubeClient;
  /** Where the services' ConfigMaps live, the admission policy applies and most requests go. */
  namespace: string;
  /** Labelled quarry.dev/admission-policy=disabled, so a request without a resolver label gets in. */
  openNamespace: string;
  repo: DemoRepo;
  bundle: DemoBundle;
  web: DemoWeb;
  hub: DemoHub;
  /** Starting in the background; only the Pipe run waits for it. */
  node: DemoNode;
  services: Record<(typeof SERVICES)[number], DemoService>;
}

const SERVICES = [
  "lifecycle-controller",
  "cluster-resolver",
  "git-resolver",
  "bundle-resolver",
  "http-resolver",
  "hub-resolver",
  "pipe-resolver",
  "run-controller",
  "wait-task",
] as const;

export interface DemoClusterOptions {
  /** Which run CRDs to install (@quarry/devcluster/install); default Quarry's. */
  runCrds?: RunCrdMode;
}

export async function startDemoCluster(
  n: Narrator,
  teardown: Teardown,
  signal: AbortSignal,
  opts: DemoClusterOptions = {},
): Promise<DemoCluster> {
  // our own directory: it names the control plane's processes and teardown removes it in any case
  const dir = mkdtempSync(join(tmpdir(), "quarry-demo-"));
  const cp = await startCleanly(dir, n, teardown);
  signal.throwIfAborted();
  // after the control plane's teardown, so it runs before it: pods and the kubelet go first
  const node = startDemoNode(cp, n, teardown, signal);
  const admin = RestKubeClient.fromEnvironment(cp.adminKubeconfig);

  await n.step(
    "installing Quarry's API (ResolutionRequest CRD, admission policies, Run and CustomRun CRDs) and stand-ins for Tekton's CRDs",
    // the cluster resolver discovers the Tekton kinds when it starts, so they come first
    () => Promise.all([installQuarryApi(admin, { runCrds: opts.runCrds }), installTektonCrds(admin)]),
    () => "CRDs established and served",
    "Quarry's API and Tekton's CRDs",
  );
  signal.throwIfAborted();

  const [scn, open] = await n.step(
    "creating the demo namespaces",
    () =>
      Promise.all([newScenario("demo", { cp }), newScenario("demo-open", { cp, skipAdmissionPolicy: true })]),
    ([scn, open]) =>
      `${scn.namespace}, and ${open.namespace} (labelled quarry.dev/admission-policy=disabled)`,
    "the demo namespaces",
  );
  signal.throwIfAborted();

  const repo = await n.step(
    "starting a git server (git http-backend on loopback) and building a repository with git",
    () => startDemoGit(dir, teardown, n),
    (r) => `${r.url}: ${HELLO_PATH}, branch main and tag ${HELLO_TAG} at ${r.commit.slice(0, 7)}`,
    "a git server and its repository",
  );
  signal.throwIfAborted();

  const bundle = await n.step(
    "starting an OCI registry (CNCF distribution on loopback) and pushing a bundle with tkn",
    () => startDemoRegistry(teardown, n),
    (b) => `${b.ref} at ${b.digest.slice(0, 19)}…: Task ${BUNDLE_TASK}, Pipeline ${BUNDLE_PIPELINE}`,
    "an OCI registry and a pushed bundle",
  );
  signal.throwIfAborted();

  const web = await n.step(
    "starting a web server (node:http on loopback) serving a Task file",
    () => startDemoWeb(teardown, n),
    (w) => `${w.url}, ${w.digest.slice(0, 19)}…`,
    "a web server and its file",
  );
  signal.throwIfAborted();

  const hub = await n.step(
    "starting a protocol fixture of Artifact Hub's API on loopback (not a hub: the endpoints the hub resolver calls)",
    () => startDemoHub(teardown, n),
    (h) => `${h.base}: Task ${HUB_TASK} in ${HUB_CATALOG}, versions ${HUB_VERSIONS.join(", ")}`,
    "a hub protocol fixture",
  );
  signal.throwIfAborted();

  await n.step(
    "writing the services' ConfigMaps, a Task for the cluster resolver to serve, and a Pipe",
    () => configure(scn, repo, bundle, hub, n),
    () => "written",
    "the ConfigMaps, a Task and a Pipe",
  );
  signal.throwIfAborted();

  const services = await n.step(
    "starting the services, each a real process under its own ServiceAccount with its chart's RBAC",
    () => startServices(cp, scn, dir, teardown, n, signal),
    () => `all ${SERVICES.length} ready`,
    `the fleet (${SERVICES.length} services, ready)`,
  );
  return {
    cp,
    admin,
    namespace: scn.namespace,
    openNamespace: open.namespace,
    repo,
    bundle,
    web,
    hub,
    node,
    services,
  };
}

async function configure(
  scn: Scenario,
  repo: DemoRepo,
  bundle: DemoBundle,
  hub: DemoHub,
  n: Narrator,
): Promise<void> {
  const ns = scn.namespace;
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": DEMO_TIMEOUT });
  n.say(`  ${ns}/lifecycle-controller-config: default-maximum-resolution-timeout: ${DEMO_TIMEOUT}`);
  // an allow-list, as a production config would have: only the demo's git server
  const allowed = `${repo.server.baseUrl.replaceAll(".", "\\.")}/.*`;
  await setConfig(scn, "git-resolver-config", { "allowed-urls": allowed });
  n.say(`  ${ns}/git-resolver-config: allowed-urls: ${allowed}`);
  // the same for bundles: only the demo's repository on the demo's registry
  const repos = `${bundle.registry.host.replaceAll(".", "\\.")}/${BUNDLE_REPO}`;
  await setConfig(scn, "bundleresolver-config", { "allowed-repositories": repos });
  n.say(`  ${ns}/bundleresolver-config: allowed-repositories: ${repos}`);
  // Tekton's key for the hubs to ask, in order: only the fixture, never artifacthub.io
  const hubs = `- ${hub.base}`;
  await setConfig(scn, "hubresolver-config", { "artifact-hub-urls": hubs });
  n.say(`  ${ns}/hubresolver-config: artifact-hub-urls: ${hubs}`);
  await setConfig(scn, "run-controller-config", {
    "initial-update-timeout": DEMO_INITIAL_UPDATE_TIMEOUT,
    "enforcement-grace": "5s",
  });
  n.say(
    `  ${ns}/run-controller-config: initial-update-timeout: ${DEMO_INITIAL_UPDATE_TIMEOUT}, enforcement-grace: 5s`,
  );
  await applyObject(scn.admin, {
    apiVersion: "tekton.dev/v1",
    kind: "Task",
    metadata: { name: GREET_TASK, namespace: ns },
    spec: {
      params: [{ name: "who", type: "string", default: "world" }],
      steps: [{ name: "greet", image: "busybox", script: 'echo "hello, $(params.who), from the cluster"' }],
    },
  });
  n.say(`  Task ${ns}/${GREET_TASK}`);
  await configurePipes(scn, n);
}

/** In parallel: each is a Node process that spends about a second starting. */
async function startServices(
  cp: ControlPlane,
  scn: Scenario,
  dir: string,
  teardown: Teardown,
  n: Narrator,
  signal: AbortSignal,
): Promise<DemoCluster["services"]> {
  const ctx = { cp, scn, teardown, n, signal };
  const env: Record<string, Record<string, string>> = {
    // inside the demo's directory, so the teardown removes it
    "git-resolver": { QUARRY_GIT_CACHE_DIR: join(dir, "git-cache") },
  };
  const started = await Promise.all(
    SERVICES.map(async (name) => {
      const s = await startDemoService(name, env[name] ?? {}, ctx);
      n.say(`  ${name.padEnd(21)} pid ${String(s.svc.pid).padEnd(7)} ServiceAccount ${s.serviceAccount}`);
      return [name, s] as const;
    }),
  );
  return Object.fromEntries(started) as DemoCluster["services"];
}

/** Starts the control plane with its teardown registered before the start completes, so Ctrl-C during it still stops what it started. */
async function startCleanly(dir: string, n: Narrator, teardown: Teardown): Promise<ControlPlane> {
  let cp: ControlPlane | undefined;
  let starting: Promise<ControlPlane> | undefined;
  teardown.add("the control plane", async () => {
    if (cp) await cp.stop();
    else if (starting) await stopUnfinishedStart(starting, dir);
    rmSync(dir, { recursive: true, force: true });
    n.sayAlways("control plane stopped, its directory removed");
  });
  return n.step(
    "starting the embedded control plane (etcd + kube-apiserver)",
    () => {
      starting = startControlPlane({ dir, log: (m) => n.say(`  ${m}`) }).then((started) => {
        cp = started;
        return started;
      });
      return starting;
    },
    (started) => `control plane up at ${started.server}`,
    "the embedded control plane",
  );
}

/** Without /proc to find its processes, how long teardown waits for an overtaken start to finish. */
const PENDING_START_GRACE_MS = 10_000;

/** Stops a control plane whose start an interruption overtook. */
async function stopUnfinishedStart(starting: Promise<ControlPlane>, dir: string): Promise<void> {
  const pids = childrenMentioning(dir);
  if (pids) return stopPids(pids);
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), PENDING_START_GRACE_MS);
  });
  const started = await Promise.race([starting.catch(() => undefined), gaveUp]);
  clearTimeout(timer);
  await started?.stop();
}
