// A namespace of one's own on a cluster: Quarry's services started in it as
// real processes, each under its own ServiceAccount bound to the rules its
// chart ships (identity.ts) and scoped to the namespace, and cleanup of all of
// it. The e2e scenarios and the demo both stand on it.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ResolutionRequest } from "@quarry/api";
import type { KubeClient, KubeObject } from "@quarry/kube";
import { configMaps, isApiError, RestKubeClient } from "@quarry/kube";
import { AllInOneHost, allInOneLogFile, isComponent, type ServiceMode } from "./all-in-one.ts";
import { applyObject } from "./apply.ts";
import {
  type ControlPlaneInfo,
  createServiceIdentity,
  deleteServiceIdentity,
  type ServiceIdentity,
} from "./identity.ts";
import { kinds } from "./kinds.ts";
import { type RunningService, startService } from "./service.ts";

/** A cluster's address, its CA, a directory for kubeconfigs and logs, and admin credentials. */
export interface ClusterAccess extends ControlPlaneInfo {
  adminKubeconfig: string;
}

export interface Scenario {
  cp: ClusterAccess;
  admin: KubeClient;
  namespace: string;
  identities: Map<string, ServiceIdentity>;
  services: RunningService[];
  /** How start runs the services that are components of the all-in-one process (all-in-one.ts). */
  mode: ServiceMode;
  /** In all-in-one mode: the one process and its components. */
  allInOne: AllInOneHost | undefined;
  /**
   * Starts a service scoped to this namespace (its ConfigMap and watches live here). In all-in-one
   * mode a component joins the scenario's one all-in-one process instead (all-in-one.ts says how
   * kill and stop then behave); other services, and any start with `opts.entry` or another
   * identity, run as their own processes in both modes.
   */
  start(service: string, env?: Record<string, string>, opts?: StartAs): Promise<RunningService>;
  /** Starts each service as start does; in all-in-one mode the components join the process together (one start). */
  startAll(
    services: readonly string[],
    env?: Record<string, string>,
    opts?: StartAs,
  ): Promise<RunningService[]>;
  identity(service: string): Promise<ServiceIdentity>;
  /** Another namespace for this scenario (e.g. a source other than the request's), deleted at cleanup. */
  extraNamespace(prefix: string): Promise<string>;
  cleanup(): Promise<void>;
}

/** A process that is not one service's main.ts: an e2e fixture hosting several services' code. */
export interface StartAs {
  /** The script to run. */
  entry?: string;
  /** Whose identity it runs under (ServiceAccount and chart rules); the process's own name by default. */
  identity?: string;
  /** How long it may take to answer /readyz (default 30 s). */
  readyTimeoutMs?: number;
}

export interface ScenarioOptions {
  /** Label the namespace so the shipped admission policy does not apply (to test controller-side checks). */
  skipAdmissionPolicy?: boolean;
  cp: ClusterAccess;
  /** fleet (the default): one process per service; all-in-one: components in one process. */
  mode?: ServiceMode;
}

export async function newScenario(prefix: string, opts: ScenarioOptions): Promise<Scenario> {
  const { cp } = opts;
  const admin = RestKubeClient.fromEnvironment(cp.adminKubeconfig);
  const namespace = `${prefix}-${randomBytes(3).toString("hex")}`;
  const logsDir = join(cp.dir, "logs");
  mkdirSync(logsDir, { recursive: true });
  await applyObject(admin, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: namespace,
      labels: opts.skipAdmissionPolicy ? { "quarry.dev/admission-policy": "disabled" } : {},
    },
  });
  const extra: string[] = [];
  const mode = opts.mode ?? "fleet";
  const baseEnv = { QUARRY_SYSTEM_NAMESPACE: namespace, QUARRY_WATCH_NAMESPACE: namespace };
  const allInOne =
    mode === "all-in-one"
      ? new AllInOneHost({ admin, cp, namespace, logFile: allInOneLogFile(logsDir, namespace), baseEnv })
      : undefined;
  /** Whether start runs `service` as a component of the all-in-one process. */
  const hosted = (service: string, as: StartAs) =>
    allInOne !== undefined &&
    isComponent(service) &&
    as.entry === undefined &&
    (as.identity === undefined || as.identity === service);
  const startOwn = async (service: string, env: Record<string, string>, as: StartAs) => {
    const id = await scn.identity(as.identity ?? service);
    const svc = await startService(service, {
      kubeconfig: id.kubeconfig,
      logFile: join(logsDir, `${namespace}-${service}.log`),
      env: { ...baseEnv, ...env },
      entry: as.entry,
      readyTimeoutMs: as.readyTimeoutMs,
    });
    scn.services.push(svc);
    return svc;
  };
  const startHosted = async (services: readonly string[], env: Record<string, string>, as: StartAs) => {
    // the whole process starts: more than one service's imports and informers before /readyz
    const started = await allInOne!.start(
      services.map((service) => ({ service, env })),
      Math.max(as.readyTimeoutMs ?? 0, 60_000),
    );
    scn.services.push(...started);
    return started;
  };
  const scn: Scenario = {
    cp,
    admin,
    namespace,
    identities: new Map(),
    services: [],
    mode,
    allInOne,
    identity: async (service) => {
      let id = scn.identities.get(service);
      if (!id) {
        id = await createServiceIdentity(admin, cp, service, namespace);
        scn.identities.set(service, id);
      }
      return id;
    },
    start: async (service, env = {}, as = {}) =>
      hosted(service, as) ? (await startHosted([service], env, as))[0]! : startOwn(service, env, as),
    startAll: async (services, env = {}, as = {}) => {
      const together = services.filter((s) => hosted(s, as));
      const out = together.length > 0 ? await startHosted(together, env, as) : [];
      for (const s of services.filter((x) => !together.includes(x))) out.push(await startOwn(s, env, as));
      return services.map((s) => out.find((o) => o.name === s)!);
    },
    extraNamespace: async (p) => {
      const name = `${p}-${randomBytes(3).toString("hex")}`;
      await applyObject(admin, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
      extra.push(name);
      return name;
    },
    cleanup: async () => {
      // the one process first: its handles' stop() would each restart it without their component
      await allInOne?.dispose();
      await Promise.all(scn.services.map((s) => s.stop()));
      for (const service of scn.identities.keys()) await deleteServiceIdentity(admin, service, namespace);
      for (const ns of [namespace, ...extra])
        await admin.delete(kinds.Namespace!, undefined, ns).catch(() => {});
    },
  };
  return scn;
}

/** A request as a client (Tekton, the CLI) would create it. */
export function newRequest(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  params: { name: string; value: string }[] | Record<string, string> = [],
): ResolutionRequest {
  if (!Array.isArray(params)) params = Object.entries(params).map(([n, value]) => ({ name: n, value }));
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name, namespace, labels },
    spec: { params },
  };
}

/** Writes a resolver's ConfigMap in the scenario's namespace. */
export async function setConfig(scn: Scenario, name: string, data: Record<string, string>): Promise<void> {
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: scn.namespace },
    data,
  });
}

/** Adds `data` to the scenario's ConfigMap `name` (made when missing), keeping its other keys. */
export async function mergeConfig(scn: Scenario, name: string, data: Record<string, string>): Promise<void> {
  let current: Record<string, string> = {};
  try {
    const cm = await scn.admin.get<KubeObject & { data?: Record<string, string> }>(
      configMaps,
      scn.namespace,
      name,
    );
    current = cm.data ?? {};
  } catch (err) {
    if (!isApiError(err, 404)) throw err;
  }
  await setConfig(scn, name, { ...current, ...data });
}

export function setLifecycleConfig(scn: Scenario, data: Record<string, string>): Promise<void> {
  return setConfig(scn, "lifecycle-controller-config", data);
}
