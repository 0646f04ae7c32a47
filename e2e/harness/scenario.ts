// Per-file test fixture: a fresh namespace on the shared control plane, the
// services under test running as real processes with their shipped RBAC and
// scoped to that namespace, and cleanup of all of it even when a test fails.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import type { KubeClient } from "@quarry/kube";
import { applyObject } from "./apply.ts";
import { adminClient, type SharedControlPlane, sharedControlPlane } from "./env.ts";
import { createServiceIdentity, deleteServiceIdentity, type ServiceIdentity } from "./identity.ts";
import { kinds } from "./kinds.ts";
import { type RunningService, startService } from "./service.ts";
import { waitUntil } from "./wait.ts";

export interface Scenario {
  cp: SharedControlPlane;
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
}

export interface ScenarioOptions {
  /** Label the namespace so the shipped admission policy does not apply (to test controller-side checks). */
  skipAdmissionPolicy?: boolean;
  cp?: SharedControlPlane;
}

export async function newScenario(prefix: string, opts: ScenarioOptions = {}): Promise<Scenario> {
  const cp = opts.cp ?? sharedControlPlane();
  const admin = adminClient(cp);
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

export function createRequest(client: KubeClient, rr: ResolutionRequest): Promise<ResolutionRequest> {
  return client.create(resolutionRequests, rr);
}

export function getRequest(client: KubeClient, namespace: string, name: string): Promise<ResolutionRequest> {
  return client.get<ResolutionRequest>(resolutionRequests, namespace, name);
}

export function succeeded(rr: ResolutionRequest) {
  return rr.status?.conditions?.find((c) => c.type === "Succeeded");
}

export function setLifecycleConfig(scn: Scenario, data: Record<string, string>): Promise<void> {
  return setConfig(scn, "lifecycle-controller-config", data);
}

export interface UseScenarioOptions extends ScenarioOptions {
  /** Written as lifecycle-controller-config before the services start. */
  lifecycleConfig?: Record<string, string>;
  /** Services to start in `before` (default: none). */
  start?: string[];
  /** Runs after the namespace exists and before services start (objects the tests read). */
  setup?: (scn: Scenario) => Promise<void>;
}

/**
 * Registers node:test before/after hooks that make a scenario, start its
 * services and clean it all up; returns an accessor valid inside tests.
 */
export function useScenario(prefix: string, opts: UseScenarioOptions = {}): () => Scenario {
  let scn: Scenario | undefined;
  before(async () => {
    scn = await newScenario(prefix, opts);
    if (opts.lifecycleConfig) await setLifecycleConfig(scn, opts.lifecycleConfig);
    await opts.setup?.(scn);
    for (const service of opts.start ?? []) await scn.start(service);
  });
  after(() => scn?.cleanup());
  return () => {
    if (!scn) throw new Error("scenario used outside a test");
    return scn;
  };
}

/** Waits until the request satisfies `ready` and returns it. */
export function waitForRequest(
  scn: Scenario,
  name: string,
  ready: (rr: ResolutionRequest) => boolean,
  timeoutMs = 30_000,
): Promise<ResolutionRequest> {
  return waitUntil(
    `request ${name}`,
    async () => {
      const rr = await getRequest(scn.admin, scn.namespace, name);
      return ready(rr) ? rr : undefined;
    },
    { timeoutMs },
  );
}

/** Predicates for waitForRequest. */
export const initialised = (rr: ResolutionRequest) => succeeded(rr) !== undefined;
export const finished = (rr: ResolutionRequest) => (succeeded(rr)?.status ?? "Unknown") !== "Unknown";

/** A resolved request's data, decoded. */
export function dataOf(rr: ResolutionRequest): string {
  return Buffer.from(rr.status?.data ?? "", "base64").toString("utf8");
}

export const resolvedOk = (rr: ResolutionRequest) => succeeded(rr)?.status === "True";

/** Writes a resolver's ConfigMap in the scenario's namespace. */
export async function setConfig(scn: Scenario, name: string, data: Record<string, string>): Promise<void> {
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: scn.namespace },
    data,
  });
}

/** A simple Tekton Task manifest. */
export function taskManifest(namespace: string, name: string, kind = "Task") {
  return {
    apiVersion: kind === "StepAction" ? "tekton.dev/v1beta1" : "tekton.dev/v1",
    kind,
    metadata: { name, namespace, labels: { "app.kubernetes.io/part-of": "e2e" } },
    spec:
      kind === "Pipeline"
        ? { tasks: [{ name: "t", taskRef: { name: "x" } }] }
        : { steps: [{ name: "s", image: "busybox", script: "echo hi" }] },
  };
}
