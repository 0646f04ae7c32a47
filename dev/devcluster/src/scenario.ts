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
  /** Starts a service scoped to this namespace (its ConfigMap and watches live here). */
  start(service: string, env?: Record<string, string>, opts?: StartAs): Promise<RunningService>;
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
  const scn: Scenario = {
    cp,
    admin,
    namespace,
    identities: new Map(),
    services: [],
    identity: async (service) => {
      let id = scn.identities.get(service);
      if (!id) {
        id = await createServiceIdentity(admin, cp, service, namespace);
        scn.identities.set(service, id);
      }
      return id;
    },
    start: async (service, env = {}, as = {}) => {
      const id = await scn.identity(as.identity ?? service);
      const svc = await startService(service, {
        kubeconfig: id.kubeconfig,
        logFile: join(logsDir, `${namespace}-${service}.log`),
        env: { QUARRY_SYSTEM_NAMESPACE: namespace, QUARRY_WATCH_NAMESPACE: namespace, ...env },
        entry: as.entry,
        readyTimeoutMs: as.readyTimeoutMs,
      });
      scn.services.push(svc);
      return svc;
    },
    extraNamespace: async (p) => {
      const name = `${p}-${randomBytes(3).toString("hex")}`;
      await applyObject(admin, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
      extra.push(name);
      return name;
    },
    cleanup: async () => {
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
