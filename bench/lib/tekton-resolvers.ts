// Tekton Pipelines' remote resolvers (cmd/resolvers, built by build-tekton.sh) installed and run
// as its release does: config/resolvers' config maps and RBAC from the Tekton module, the
// Deployment's ServiceAccount and env, in a network namespace of its own (its probes bind :8080
// whatever PROBES_PORT says) with the git server's and the registry's ports bridged in.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlaneInfo, tokenKubeconfig } from "@quarry/devcluster/identity";
import { kinds } from "@quarry/devcluster/kinds";
import { startInNetns } from "@quarry/devcluster/netns";
import { startTektonController, TEKTON_NAMESPACE, TEKTON_VERSION } from "@quarry/devcluster/tekton";
import type { KubeClient, KubeObject } from "@quarry/kube";
import yaml from "js-yaml";
import { descendantsOf } from "./git-procs.ts";
import { bridgeHostPorts } from "./netns-ports.ts";
import { sleep } from "./run.ts";

const RESOLVERS_NAMESPACE = "tekton-pipelines-resolvers";
const RESOLVERS_SA = "tekton-pipelines-resolvers";

/** The Tekton module's source directory in the Go module cache (build-tekton.sh downloaded it). */
function tektonModuleDir(): string {
  const cache = process.env.QUARRY_CACHE ?? join(homedir(), ".cache", "quarry");
  const out = execFileSync(
    "go",
    ["mod", "download", "-json", `github.com/tektoncd/pipeline@${TEKTON_VERSION}`],
    {
      cwd: join(cache, "wrappers", `tekton-pipelines-${TEKTON_VERSION}`),
      encoding: "utf8",
    },
  );
  return (JSON.parse(out) as { Dir: string }).Dir;
}

/**
 * Installs config/resolvers as released, minus the Deployment and Service (the process runs
 * here), with `configs` merged into the named config maps' data (e.g. git-resolver-config's
 * fetch-timeout).
 */
export async function installTektonResolvers(
  admin: KubeClient,
  configs: Record<string, Record<string, string>>,
): Promise<void> {
  const dir = join(tektonModuleDir(), "config", "resolvers");
  const objects = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && !/deployment|service\.yaml/.test(f))
    .sort()
    .flatMap((f) => yaml.loadAll(readFileSync(join(dir, f), "utf8")) as (KubeObject | null)[]);
  for (const obj of objects) {
    if (!obj) continue;
    const extra = obj.kind === "ConfigMap" ? configs[obj.metadata.name!] : undefined;
    const withData = extra
      ? { ...obj, data: { ...((obj as { data?: Record<string, string> }).data ?? {}), ...extra } }
      : obj;
    await applyObject(admin, withData);
  }
}

/** The pid of the first descendant of `root` whose command name is `comm` (waits up to 10 s). */
async function findDescendant(root: number, comm: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    for (const pid of descendantsOf(root)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === comm) return pid;
      } catch {}
    }
    await sleep(100);
  }
  throw new Error(`no process "${comm}" under pid ${root}`);
}

interface SideOptions {
  cp: ControlPlaneInfo;
  tektonDir: string;
  logFile: (name: "controller" | "resolvers") => string;
  /** TCP ports on the host's loopback the resolvers reach (git server, registry) */
  hostPorts: number[];
  /** hears every pid started, for the run's hard stop */
  track: (pid: number) => void;
}

/** Starts Tekton's resolvers; ready once its resolution request reconcilers hold their leases. */
async function startResolvers(admin: KubeClient, opts: SideOptions) {
  const kubeconfig = await tokenKubeconfig(admin, opts.cp, RESOLVERS_NAMESPACE, RESOLVERS_SA);
  const ports = await bridgeHostPorts(opts.hostPorts, join(opts.cp.dir, `tr-${process.pid}`));
  const { program, args } = ports.wrap(join(opts.tektonDir, "resolvers"), []);
  const proc = await startInNetns({
    program,
    args,
    // config/resolvers/resolvers-deployment.yaml's env
    env: {
      KUBECONFIG: kubeconfig,
      SYSTEM_NAMESPACE: RESOLVERS_NAMESPACE,
      KUBERNETES_MIN_VERSION: "v1.28.0",
      CONFIG_LOGGING_NAME: "config-logging",
      CONFIG_OBSERVABILITY_NAME: "config-observability",
      CONFIG_FEATURE_FLAGS_NAME: "feature-flags",
      CONFIG_LEADERELECTION_NAME: "config-leader-election-resolvers",
      METRICS_DOMAIN: "tekton.dev/resolution",
      PROBES_PORT: "8080",
      TEKTON_HUB_API: "",
      ARTIFACT_HUB_API: "https://artifacthub.io/",
      HOME: opts.cp.dir,
    },
    server: opts.cp.server,
    socketPath: join(opts.cp.dir, `tekton-resolvers-${process.pid}.sock`),
    logFile: opts.logFile("resolvers"),
  }).catch(async (err: unknown) => {
    await ports.close();
    throw err;
  });
  opts.track(proc.pid);
  const stop = async () => {
    await proc.stop();
    await ports.close();
  };
  try {
    // the program itself: the namespace's bridges are its ancestors
    const pid = await findDescendant(proc.pid, "resolvers");
    opts.track(pid);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode() !== undefined)
        throw new Error(`Tekton's resolvers exited; log:\n${proc.logs().slice(-3000)}`);
      const leases = await admin.list<KubeObject & { spec?: { holderIdentity?: string } }>(
        kinds.Lease!,
        RESOLVERS_NAMESPACE,
      );
      const held = leases.items.filter((l) => l.spec?.holderIdentity).length;
      // one lease per resolver's reconciler (git, hub, bundles, cluster, http)
      if (held >= 5) return { pid, stop };
      if (Date.now() > deadline) throw new Error(`Tekton's resolvers hold ${held} leases after 60 s`);
      await sleep(250);
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Tekton's side: its controller (the ResolutionRequest reconciler) and resolvers, started afresh
 * (a stopped process leaves its leases held until they expire, 60 s: they are deleted first); the
 * processes measured, by name, and how to stop both.
 */
export async function startTektonSide(
  admin: KubeClient,
  opts: SideOptions,
): Promise<{ procs: { name: string; pid: number }[]; stop: () => Promise<void> }> {
  for (const ns of [TEKTON_NAMESPACE, RESOLVERS_NAMESPACE])
    for (const l of (await admin.list(kinds.Lease!, ns)).items)
      await admin.delete(kinds.Lease!, ns, l.metadata.name!).catch(() => {});
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
    const resolvers = await startResolvers(admin, opts);
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
