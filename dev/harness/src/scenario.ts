// Per-file test fixture: a fresh namespace on the shared control plane, the
// services under test running as real processes with their shipped RBAC and
// scoped to that namespace, and cleanup of all of it even when a test fails.
import { after, before } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import { isComponent } from "@quarry/devcluster/all-in-one";
import {
  type ScenarioOptions as LibScenarioOptions,
  newScenario as newScenarioOn,
  type Scenario,
  setLifecycleConfig,
} from "@quarry/devcluster/scenario";
import { waitUntil } from "@quarry/devcluster/wait";
import type { KubeClient } from "@quarry/kube";
import { e2eMode, sharedControlPlane } from "./env.ts";

export {
  mergeConfig,
  newRequest,
  type Scenario,
  type StartAs,
  setConfig,
  setLifecycleConfig,
} from "@quarry/devcluster/scenario";

export type ScenarioOptions = Partial<LibScenarioOptions>;

/**
 * A scenario on the runner's shared control plane unless `opts.cp` names another, in the runner's
 * mode (QUARRY_E2E_MODE: its components in one all-in-one process, or each its own) unless
 * `opts.mode` says.
 */
export function newScenario(prefix: string, opts: ScenarioOptions = {}): Promise<Scenario> {
  return newScenarioOn(prefix, {
    ...opts,
    cp: opts.cp ?? sharedControlPlane(),
    mode: opts.mode ?? e2eMode(),
  });
}

/**
 * The name `service` logs, traces and records Events under in this scenario's mode: its own, or
 * in all-in-one mode, for a component, the one process's runtime's ("quarry").
 */
export function processName(scn: Scenario, service: string): string {
  return scn.mode === "all-in-one" && isComponent(service) ? "quarry" : service;
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
    await scn.startAll(opts.start ?? []);
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
