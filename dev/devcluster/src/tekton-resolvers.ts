// Tekton Pipelines' remote resolvers (cmd/resolvers, built by build-tekton.sh) installed and run
// as its release does: config/resolvers' config maps and RBAC from the Tekton module, the
// Deployment's ServiceAccount and env, in a network namespace of its own (its probes bind :8080
// whatever PROBES_PORT says) with the host ports it must reach (git server, registry, HTTP
// servers) bridged in (netns-ports.ts).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "@quarry/kube";
import yaml from "js-yaml";
import { applyObject } from "./apply.ts";
import { findDescendant } from "./descendants.ts";
import { type ControlPlaneInfo, tokenKubeconfig } from "./identity.ts";
import { kinds } from "./kinds.ts";
import { startInNetns } from "./netns.ts";
import { bridgeHostPorts } from "./netns-ports.ts";
import { TEKTON_VERSION } from "./tekton.ts";

/** Where Tekton's release puts its resolvers (config/resolvers/100-namespace.yaml). */
export const TEKTON_RESOLVERS_NAMESPACE = "tekton-pipelines-resolvers";
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

export interface TektonResolversOptions {
  cp: ControlPlaneInfo;
  /** build-tekton.sh's output directory (holds `resolvers`). */
  tektonDir: string;
  logFile: string;
  /** TCP ports on the host's loopback the resolvers reach (git server, registry, HTTP servers). */
  hostPorts: readonly number[];
  /** Over the Deployment's env, e.g. ARTIFACT_HUB_API and TEKTON_HUB_API naming a fixture. */
  env?: Record<string, string>;
  /** Hears each pid as soon as it exists (a caller's hard stop). */
  track?: (pid: number) => void;
}

export interface TektonResolvers {
  /** The `resolvers` program itself (the namespace's bridges are its ancestors). */
  pid: number;
  /** The namespace's first process, whose group holds the bridges and the program. */
  groupPid: number;
  logs(): string;
  /** Stops the program and its bridges. */
  stop(): Promise<void>;
}

/**
 * Starts Tekton's resolvers afresh (a stopped process leaves its leases held until they expire,
 * 60 s: the namespace's leases are deleted first); ready once its ResolutionRequest reconcilers
 * hold their leases.
 */
export async function startTektonResolvers(
  admin: KubeClient,
  opts: TektonResolversOptions,
): Promise<TektonResolvers> {
  for (const l of (await admin.list(kinds.Lease!, TEKTON_RESOLVERS_NAMESPACE)).items)
    await admin.delete(kinds.Lease!, TEKTON_RESOLVERS_NAMESPACE, l.metadata.name!).catch(() => {});
  const kubeconfig = await tokenKubeconfig(admin, opts.cp, TEKTON_RESOLVERS_NAMESPACE, RESOLVERS_SA);
  const ports = await bridgeHostPorts(opts.hostPorts, join(opts.cp.dir, `tr-${process.pid}`));
  const { program, args } = ports.wrap(join(opts.tektonDir, "resolvers"), []);
  const proc = await startInNetns({
    program,
    args,
    // config/resolvers/resolvers-deployment.yaml's env
    env: {
      KUBECONFIG: kubeconfig,
      SYSTEM_NAMESPACE: TEKTON_RESOLVERS_NAMESPACE,
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
      ...opts.env,
    },
    server: opts.cp.server,
    socketPath: join(opts.cp.dir, `tekton-resolvers-${process.pid}.sock`),
    logFile: opts.logFile,
  }).catch(async (err: unknown) => {
    await ports.close();
    throw err;
  });
  opts.track?.(proc.pid);
  const stop = async () => {
    await proc.stop();
    await ports.close();
  };
  try {
    const pid = await findDescendant(proc.pid, "resolvers");
    opts.track?.(pid);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode() !== undefined)
        throw new Error(`Tekton's resolvers exited; log:\n${proc.logs().slice(-3000)}`);
      const leases = await admin.list<KubeObject & { spec?: { holderIdentity?: string } }>(
        kinds.Lease!,
        TEKTON_RESOLVERS_NAMESPACE,
      );
      const held = leases.items.filter((l) => l.spec?.holderIdentity).length;
      // one lease per resolver's reconciler (git, hub, bundles, cluster, http)
      if (held >= 5) return { pid, groupPid: proc.pid, logs: proc.logs, stop };
      if (Date.now() > deadline) throw new Error(`Tekton's resolvers hold ${held} leases after 60 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await stop();
    throw err;
  }
}
