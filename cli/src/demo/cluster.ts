// Brings up the demo's cluster with the e2e harness's pieces: the embedded
// control plane, Quarry's API, two namespaces, and the lifecycle controller
// as a real process under its own ServiceAccount and shipped RBAC.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "@quarry/kube";
import { type ControlPlane, startControlPlane } from "../../../e2e/controlplane/controlplane.ts";
import { installQuarryApi } from "../../../e2e/controlplane/install.ts";
import { newScenario, type Scenario, setLifecycleConfig } from "../../../e2e/harness/scenario.ts";
import { type RunningService, startService } from "../../../e2e/harness/service.ts";
import { childrenMentioning, stopPids } from "./children.ts";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

export const DEMO_TIMEOUT = "5s";

export interface DemoCluster {
  cp: ControlPlane;
  admin: KubeClient;
  /** Where the lifecycle controller runs and the admission policy applies. */
  namespace: string;
  /** Labelled quarry.dev/admission-policy=disabled, so a request without a resolver label gets in. */
  openNamespace: string;
  controller: RunningService;
}

export async function startDemoCluster(
  n: Narrator,
  teardown: Teardown,
  signal: AbortSignal,
): Promise<DemoCluster> {
  // our own directory: it names the control plane's processes and teardown removes it in any case
  const dir = mkdtempSync(join(tmpdir(), "quarry-demo-"));
  let cp: ControlPlane | undefined;
  let starting: Promise<ControlPlane> | undefined;
  // registered before the start completes, so Ctrl-C during it still stops what it started
  teardown.add("the control plane", async () => {
    if (cp) await cp.stop();
    else if (starting) await stopUnfinishedStart(starting, dir);
    rmSync(dir, { recursive: true, force: true });
    n.sayAlways("control plane stopped, its directory removed");
  });
  const ready = await n.step(
    "starting the embedded control plane (etcd + kube-apiserver)",
    () => {
      starting = startControlPlane({ dir, log: (m) => n.say(`  ${m}`) }).then((started) => {
        cp = started;
        return started;
      });
      return starting;
    },
    (started) => `control plane up at ${started.server}`,
  );
  signal.throwIfAborted();
  const admin = KubeClient.fromEnvironment(ready.adminKubeconfig);

  await n.step(
    "installing Quarry's API (ResolutionRequest CRD, admission policies)",
    () => installQuarryApi(admin),
    () => "CRD established and served",
  );
  signal.throwIfAborted();

  const [scn, open] = await n.step(
    "creating the demo namespaces",
    () =>
      Promise.all([
        newScenario("demo", { cp: ready }),
        newScenario("demo-open", { cp: ready, skipAdmissionPolicy: true }),
      ]),
    ([scn, open]) =>
      `${scn.namespace}, and ${open.namespace} (labelled quarry.dev/admission-policy=disabled)`,
  );
  signal.throwIfAborted();

  const controller = await n.step(
    "starting lifecycle-controller (node services/lifecycle-controller/src/main.ts)",
    () => startController(ready, scn, teardown, n, signal),
    (svc) => `pid ${svc.pid}, ServiceAccount ${scn.namespace}/quarry-lifecycle-controller, /readyz 200`,
  );
  signal.throwIfAborted();

  await n.step(
    `setting default-maximum-resolution-timeout: ${DEMO_TIMEOUT} in ${scn.namespace}/lifecycle-controller-config`,
    () => setLifecycleConfig(scn, { "default-maximum-resolution-timeout": DEMO_TIMEOUT }),
    () => "the controller watches its ConfigMap and re-decides pending deadlines",
  );
  return {
    cp: ready,
    admin,
    namespace: scn.namespace,
    openNamespace: open.namespace,
    controller,
  };
}

/**
 * Runs the controller as scn.start would (its ServiceAccount, the shipped RBAC), but
 * registers its teardown as soon as the process exists and notices at once if it
 * exits before it is ready, instead of polling /readyz until a deadline.
 */
async function startController(
  cp: ControlPlane,
  scn: Scenario,
  teardown: Teardown,
  n: Narrator,
  signal: AbortSignal,
): Promise<RunningService> {
  const id = await scn.identity("lifecycle-controller");
  const svc = await startService("lifecycle-controller", {
    kubeconfig: id.kubeconfig,
    logFile: join(cp.dir, "logs", `${scn.namespace}-lifecycle-controller.log`),
    // all namespaces: the demo's requests live in two
    env: { QUARRY_SYSTEM_NAMESPACE: scn.namespace, QUARRY_WATCH_NAMESPACE: "", LOG_LEVEL: "info" },
    waitReady: false,
  });
  teardown.add("lifecycle-controller", async () => {
    const { code, signal } = await svc.stop();
    n.sayAlways(`lifecycle-controller stopped (${signal ?? `exit ${code}`})`);
  });
  let exited = false;
  void svc.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    signal.throwIfAborted();
    if (exited)
      throw new Error(`lifecycle-controller exited before it was ready; log:\n${svc.logs().slice(-3000)}`);
    if (Date.now() > deadline)
      throw new Error(`lifecycle-controller not ready within ${READY_TIMEOUT_MS / 1000}s`);
    const status = await svc.ops("/readyz").then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return svc;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const READY_TIMEOUT_MS = 30_000;
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
