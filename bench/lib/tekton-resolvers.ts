// Tekton's side of the side-by-side benchmark: its controller (the ResolutionRequest reconciler)
// and its resolvers (@quarry/devcluster/tekton-resolvers), with the pids the figures measure.
import { findDescendant } from "@quarry/devcluster/descendants";
import type { ControlPlaneInfo } from "@quarry/devcluster/identity";
import { kinds } from "@quarry/devcluster/kinds";
import { startTektonController, TEKTON_NAMESPACE } from "@quarry/devcluster/tekton";
import { startTektonResolvers } from "@quarry/devcluster/tekton-resolvers";
import type { KubeClient } from "@quarry/kube";

export { installTektonResolvers } from "@quarry/devcluster/tekton-resolvers";

interface SideOptions {
  cp: ControlPlaneInfo;
  tektonDir: string;
  logFile: (name: "controller" | "resolvers") => string;
  /** TCP ports on the host's loopback the resolvers reach (git server, registry) */
  hostPorts: number[];
  /** hears every pid started, for the run's hard stop */
  track: (pid: number) => void;
}

/**
 * Tekton's side: its controller and resolvers, started afresh (a stopped process leaves its
 * leases held until they expire, 60 s: the controller's are deleted here, the resolvers' by
 * startTektonResolvers); the processes measured, by name, and how to stop both.
 */
export async function startTektonSide(
  admin: KubeClient,
  opts: SideOptions,
): Promise<{ procs: { name: string; pid: number }[]; stop: () => Promise<void> }> {
  for (const l of (await admin.list(kinds.Lease!, TEKTON_NAMESPACE)).items)
    await admin.delete(kinds.Lease!, TEKTON_NAMESPACE, l.metadata.name!).catch(() => {});
  const { tektonDir, cp } = opts;
  const controller = await startTektonController(admin, {
    cp,
    tektonDir,
    logFile: opts.logFile("controller"),
  });
  opts.track(controller.pid);
  try {
    const controllerPid = await findDescendant(controller.pid, "controller");
    opts.track(controllerPid);
    const resolvers = await startTektonResolvers(admin, {
      cp,
      tektonDir,
      logFile: opts.logFile("resolvers"),
      hostPorts: opts.hostPorts,
      track: opts.track,
    });
    return {
      procs: [
        { name: "Tekton controller", pid: controllerPid },
        { name: "Tekton resolvers", pid: resolvers.pid },
      ],
      stop: async () => {
        await Promise.all([resolvers.stop(), controller.stop()]);
      },
    };
  } catch (err) {
    await controller.stop();
    throw err;
  }
}
