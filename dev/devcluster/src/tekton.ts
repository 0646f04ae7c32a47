// Tekton Pipelines' own processes on a test control plane: the binaries build-tekton.sh builds
// from the Go module proxy, Tekton's CRDs (all but ResolutionRequest, which is Quarry's), its
// config maps and its RBAC from the same module, and each binary run as a process in a network
// namespace of its own (netns.ts), because both Tekton binaries bind their health probes to
// :8080 whatever PROBES_PORT says (and metrics to :9090, profiling to :8008): two of them, or
// anything else on those ports, would collide on the host.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { KubeClient, KubeObject } from "@quarry/kube";
import yaml from "js-yaml";
import { applyObject } from "./apply.ts";
import { type ControlPlaneInfo, tokenKubeconfig } from "./identity.ts";
import { applyCrdObjects } from "./install.ts";
import { kinds } from "./kinds.ts";
import { type NetnsProcess, startInNetns } from "./netns.ts";
import { waitUntil } from "./wait.ts";

const here = dirname(fileURLToPath(import.meta.url));

export const TEKTON_VERSION = process.env.QUARRY_TEKTON_VERSION ?? "v1.15.1";
/** Where Tekton's release manifests put the controller (config/100-namespace). */
export const TEKTON_NAMESPACE = "tekton-pipelines";
const CONTROLLER_SA = "tekton-pipelines-controller";
/** Quarry's CRD, never Tekton's: Quarry serves ResolutionRequests on a Tekton cluster too. */
const QUARRY_OWNED_CRDS = new Set(["resolutionrequests.resolution.tekton.dev"]);

/** The directory holding `controller`, `resolvers` and `config/` (builds them the first time: minutes). */
export async function buildTekton(signal?: AbortSignal): Promise<string> {
  const { stdout } = await promisify(execFile)("bash", [join(here, "build-tekton.sh")], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
    signal,
  });
  const lines = stdout.trim().split("\n");
  return lines[lines.length - 1]!;
}

function loadYaml(file: string): KubeObject[] {
  return (yaml.loadAll(readFileSync(file, "utf8")) as (KubeObject | null)[]).filter(
    (o): o is KubeObject => o !== null && typeof o === "object",
  );
}

/** Tekton's CRDs from the module's config/300-crds, without the ones Quarry owns. */
export function tektonCrds(tektonDir: string): KubeObject[] {
  const dir = join(tektonDir, "config", "300-crds");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) => loadYaml(join(dir, f)))
    .filter((o) => o.kind === "CustomResourceDefinition" && !QUARRY_OWNED_CRDS.has(o.metadata.name!));
}

/** Tekton's config maps (config/config-*.yaml) and RBAC (config/200-*, 201-*), as released. */
function tektonSystemObjects(tektonDir: string): KubeObject[] {
  const dir = join(tektonDir, "config");
  return readdirSync(dir)
    .filter((f) => /^(config-|20[01]-).*\.yaml$/.test(f))
    .sort()
    .flatMap((f) => loadYaml(join(dir, f)));
}

/**
 * Installs Tekton Pipelines' CRDs (not ResolutionRequest), its namespace, config maps and RBAC
 * as its release does, minus the webhook's Deployment and configurations: no webhook runs, so
 * runs must be complete specs. The CRDs keep their conversion webhook setting; nothing here
 * reads a version other than the stored one, which needs no conversion.
 */
export async function installTektonPipelines(admin: KubeClient, tektonDir: string): Promise<void> {
  await applyObject(admin, { apiVersion: "v1", kind: "Namespace", metadata: { name: TEKTON_NAMESPACE } });
  await applyCrdObjects(admin, tektonCrds(tektonDir));
  for (const obj of tektonSystemObjects(tektonDir)) await applyObject(admin, obj);
}

/** Replaces data keys of one of Tekton's config maps (e.g. config-defaults); the controller watches them. */
export async function setTektonConfig(
  admin: KubeClient,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  await waitUntil(`update ${name}`, async () => {
    const cm = await admin.get<KubeObject & { data?: Record<string, string> }>(
      kinds.ConfigMap!,
      TEKTON_NAMESPACE,
      name,
    );
    try {
      await admin.replace(kinds.ConfigMap!, { ...cm, data: { ...cm.data, ...data } });
      return true;
    } catch {
      return false; // a conflict: read again
    }
  });
}

export interface TektonControllerOptions {
  /** For kubeconfigs and logs. */
  cp: ControlPlaneInfo;
  tektonDir: string;
  logFile: string;
}

export interface TektonController extends NetnsProcess {
  /** The ServiceAccount token's kubeconfig it runs with (Tekton's own RBAC). */
  kubeconfig: string;
}

/**
 * Starts Tekton's pipelines controller (TaskRun, PipelineRun and ResolutionRequest reconcilers)
 * as its release's Deployment runs it: ServiceAccount tekton-pipelines-controller with Tekton's
 * RBAC, the Deployment's env, HA on (leases in tekton-pipelines). The images are names only: no
 * pod it creates ever runs. Resolves once it holds its reconcilers' leases.
 */
export async function startTektonController(
  admin: KubeClient,
  opts: TektonControllerOptions,
): Promise<TektonController> {
  const kubeconfig = await serviceAccountKubeconfig(admin, opts.cp, CONTROLLER_SA);
  const image = (name: string) => `quarry.test/tekton/${name}:${TEKTON_VERSION}`;
  const proc = await startInNetns({
    program: join(opts.tektonDir, "controller"),
    args: [
      "-entrypoint-image",
      image("entrypoint"),
      "-nop-image",
      image("nop"),
      "-sidecarlogresults-image",
      image("sidecarlogresults"),
      "-workingdirinit-image",
      image("workingdirinit"),
      "-shell-image",
      image("busybox"),
      "-shell-image-win",
      image("powershell"),
    ],
    // config/controller.yaml's env
    env: {
      KUBECONFIG: kubeconfig,
      SYSTEM_NAMESPACE: TEKTON_NAMESPACE,
      KUBERNETES_MIN_VERSION: "v1.28.0",
      CONFIG_DEFAULTS_NAME: "config-defaults",
      CONFIG_LOGGING_NAME: "config-logging",
      CONFIG_OBSERVABILITY_NAME: "config-observability",
      CONFIG_FEATURE_FLAGS_NAME: "feature-flags",
      CONFIG_LEADERELECTION_NAME: "config-leader-election-controller",
      CONFIG_SPIRE: "config-spire",
      METRICS_DOMAIN: "tekton.dev/pipeline",
      // cmd/controller's own probe server takes PROBES_PORT (8080 when unset) and knative's
      // sharedmain binds :8080 regardless; unset, the second bind fails, which the controller
      // logs only at exit. Apart, both listen (inside the namespace, so on no host port).
      PROBES_PORT: "8081",
    },
    server: opts.cp.server,
    socketPath: join(opts.cp.dir, `tekton-controller-${process.pid}.sock`),
    logFile: opts.logFile,
  });
  try {
    await waitUntil(
      "Tekton's controller holds its leases",
      async () => {
        if (proc.exitCode() !== undefined)
          throw new Error(`Tekton's controller exited; log:\n${proc.logs().slice(-3000)}`);
        const leases = await admin.list<KubeObject & { spec?: { holderIdentity?: string } }>(
          kinds.Lease!,
          TEKTON_NAMESPACE,
        );
        const held = (part: string) =>
          leases.items.some((l) => l.metadata.name!.includes(part) && l.spec?.holderIdentity);
        return held("taskrun") && held("pipelinerun") && held("resolutionrequest");
      },
      { timeoutMs: 60_000 },
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { ...proc, kubeconfig };
}

/** A kubeconfig with a TokenRequest token of one of Tekton's ServiceAccounts (created by its RBAC files). */
function serviceAccountKubeconfig(admin: KubeClient, cp: ControlPlaneInfo, sa: string): Promise<string> {
  return tokenKubeconfig(admin, cp, TEKTON_NAMESPACE, sa);
}
