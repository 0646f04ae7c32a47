// Starts Quarry's services for the demo as the e2e scenarios do: each a real
// process (`node services/<name>/src/main.ts`) under its own ServiceAccount
// bound to the RBAC its chart ships, watching every namespace.
import { join } from "node:path";
import type { ControlPlane } from "@quarry/devcluster/controlplane";
import type { Scenario } from "@quarry/devcluster/scenario";
import { type RunningService, startService } from "@quarry/devcluster/service";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

export interface DemoService {
  svc: RunningService;
  serviceAccount: string;
}

/**
 * Runs the service as scn.start would, but registers its teardown as soon as
 * the process exists and notices at once if it exits before it is ready,
 * instead of polling /readyz until a deadline.
 */
export async function startDemoService(
  name: string,
  env: Record<string, string>,
  ctx: { cp: ControlPlane; scn: Scenario; teardown: Teardown; n: Narrator; signal: AbortSignal },
): Promise<DemoService> {
  const { cp, scn, teardown, n, signal } = ctx;
  const id = await scn.identity(name);
  const svc = await startService(name, {
    kubeconfig: id.kubeconfig,
    logFile: join(cp.dir, "logs", `${name}.log`),
    // all namespaces: the demo's requests live in two, and a kept cluster may get more
    env: { QUARRY_SYSTEM_NAMESPACE: scn.namespace, QUARRY_WATCH_NAMESPACE: "", LOG_LEVEL: "info", ...env },
    waitReady: false,
  });
  teardown.add(name, async () => {
    const { code, signal } = await svc.stop();
    n.sayAlways(`${name} stopped (${signal ?? `exit ${code}`})`);
  });
  let exited = false;
  void svc.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    signal.throwIfAborted();
    if (exited) throw new Error(`${name} exited before it was ready; log:\n${svc.logs().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${name} not ready within ${READY_TIMEOUT_MS / 1000}s`);
    const status = await svc.ops("/readyz").then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return { svc, serviceAccount: `${scn.namespace}/${id.serviceAccount}` };
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A service that exits is noticed at once (above); this only bounds one that hangs. Generous:
 * nine Node processes start at once beside the node's, and on a 2-core machine shared with other
 * test runs one took over 30 s to be ready.
 */
const READY_TIMEOUT_MS = 120_000;
