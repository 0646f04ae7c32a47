// Tekton Pipelines' own remote resolvers (cmd/resolvers, built by devcluster's build-tekton.sh
// beside the controller) on a benchmark's control plane, installed as Tekton's release installs
// them: namespace tekton-pipelines-resolvers, its config maps (resolvers-feature-flags,
// git-resolver-config, bundleresolver-config, cluster-resolver-config, resolver-cache-config, …)
// and RBAC, all read from the Tekton module's config/resolvers, and the process run as the
// release's Deployment runs it (ServiceAccount tekton-pipelines-resolvers, the Deployment's env)
// in a network namespace of its own (its probes bind :8080 whatever PROBES_PORT says), with the
// git server's and the registry's ports bridged in.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlaneInfo, tokenKubeconfig } from "@quarry/devcluster/identity";
import { kinds } from "@quarry/devcluster/kinds";
import { type NetnsProcess, startInNetns } from "@quarry/devcluster/netns";
import { TEKTON_VERSION } from "@quarry/devcluster/tekton";
import type { KubeClient, KubeObject } from "@quarry/kube";
import yaml from "js-yaml";
import { descendantsOf } from "./git-procs.ts";
import { bridgeHostPorts } from "./netns-ports.ts";

export const RESOLVERS_NAMESPACE = "tekton-pipelines-resolvers";
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

function loadYaml(file: string): KubeObject[] {
  return (yaml.loadAll(readFileSync(file, "utf8")) as (KubeObject | null)[]).filter(
    (o): o is KubeObject => o !== null && typeof o === "object",
  );
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
    .flatMap((f) => loadYaml(join(dir, f)));
  for (const obj of objects) {
    const extra = obj.kind === "ConfigMap" ? configs[obj.metadata.name!] : undefined;
    const withData = extra
      ? { ...obj, data: { ...((obj as { data?: Record<string, string> }).data ?? {}), ...extra } }
      : obj;
    await applyObject(admin, withData);
  }
}

export interface TektonResolvers extends NetnsProcess {
  /** The resolvers process itself (the namespace's bridges are its ancestors). */
  programPid: number;
}

/** The pid of the first descendant of `root` whose command name is `comm` (waits up to 10 s). */
export async function findDescendant(root: number, comm: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    for (const pid of descendantsOf(root)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === comm) return pid;
      } catch {}
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no process "${comm}" under pid ${root}`);
}

/** Starts Tekton's resolvers (ready once its resolution request reconcilers hold their leases). */
export async function startTektonResolvers(
  admin: KubeClient,
  opts: { cp: ControlPlaneInfo; tektonDir: string; logFile: string; hostPorts: number[] },
): Promise<TektonResolvers> {
  const kubeconfig = await tokenKubeconfig(admin, opts.cp, RESOLVERS_NAMESPACE, RESOLVERS_SA);
  const ports = await bridgeHostPorts(opts.hostPorts, join(opts.cp.dir, `tr-${process.pid}`));
  const { program, args } = ports.wrap(join(opts.tektonDir, "resolvers"), []);
  let proc: NetnsProcess;
  try {
    proc = await startInNetns({
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
      logFile: opts.logFile,
    });
  } catch (err) {
    await ports.close();
    throw err;
  }
  const stop = async () => {
    await proc.stop();
    await ports.close();
  };
  try {
    const programPid = await findDescendant(proc.pid, "resolvers");
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
      if (held >= 5) break;
      if (Date.now() > deadline) throw new Error(`Tekton's resolvers hold ${held} leases after 60 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { ...proc, stop, programPid };
  } catch (err) {
    await stop();
    throw err;
  }
}
