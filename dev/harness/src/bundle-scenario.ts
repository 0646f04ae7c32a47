// A bundle e2e scenario: a real registry (CNCF distribution) on loopback, the
// bundle resolver running as its real process with its shipped RBAC, and the
// lifecycle controller. Bundles are written by the real `tkn bundle push`, or
// by crane from a hand-made OCI layout for shapes tkn refuses to write.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import {
  type Creds,
  cranePush,
  type LayoutSpec,
  type Registry,
  type RegistryOptions,
  startRegistry,
  writeOciLayout,
} from "@quarry/devcluster/registry";
import type { RunningService } from "@quarry/devcluster/service";
import {
  createRequest,
  finished,
  newRequest,
  type Scenario,
  setConfig,
  useScenario,
  waitForRequest,
} from "./scenario.ts";

export const BUNDLE_LABELS = { "resolution.tekton.dev/type": "bundles" };

export const TASK_YAML = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: build
spec:
  steps:
    - name: build
      image: busybox
      script: echo build
`;

export const PIPELINE_YAML = `apiVersion: tekton.dev/v1
kind: Pipeline
metadata:
  name: ci
spec:
  tasks:
    - name: build
      taskRef:
        name: build
`;

export function taskYaml(name: string, script = "echo hi"): string {
  return TASK_YAML.replace("name: build\nspec", `name: ${name}\nspec`).replace("echo build", script);
}

export interface BundleScenario {
  scn: Scenario;
  registry: Registry;
  resolver: RunningService;
}

export interface BundleScenarioOptions {
  registry?: RegistryOptions;
  /** bundleresolver-config written before the resolver starts (a function: from the started registry). */
  config?: Record<string, string> | ((registry: Registry) => Record<string, string>);
  /** Runs once the registry and namespace exist, before the resolver starts (push bundles, Secrets). */
  setup?: (b: Omit<BundleScenario, "resolver">) => Promise<void>;
}

export function useBundleScenario(prefix: string, opts: BundleScenarioOptions = {}): () => BundleScenario {
  let state: BundleScenario | undefined;
  let registry: Registry | undefined;
  const scenario = useScenario(prefix, {
    start: ["lifecycle-controller"],
    setup: async (scn) => {
      registry = await startRegistry(opts.registry);
      const config = typeof opts.config === "function" ? opts.config(registry) : opts.config;
      if (config) await setConfig(scn, "bundleresolver-config", config);
      await opts.setup?.({ scn, registry });
      const resolver = await scn.start("bundle-resolver");
      state = { scn, registry, resolver };
    },
  });
  after(() => registry?.dispose());
  return () => {
    scenario();
    if (!state) throw new Error("bundle scenario used outside a test");
    return state;
  };
}

/**
 * token-realm-hosts pairing the registry with its token server: the fixture's realm listens on
 * another port of 127.0.0.1, which is not the registry's host, so a pull Secret's credential
 * reaches it only when the operator pairs the two (libs/oci realm-binding.ts).
 */
export function tokenRealmHosts(registry: Registry): Record<string, string> {
  return registry.token
    ? { "token-realm-hosts": `${registry.host}=${new URL(registry.token.realm).host}` }
    : {};
}

/** Writes `spec` as an OCI layout and pushes it with crane; returns the manifest digest. */
export async function pushLayout(ref: string, spec: LayoutSpec, creds?: Creds): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "quarry-e2e-layout-"));
  try {
    writeOciLayout(dir, spec);
    return await cranePush(dir, ref, creds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates a bundles request and waits until it finished (resolved or failed). */
export async function resolveBundle(
  scn: Scenario,
  name: string,
  params: Record<string, string>,
  labels: Record<string, string> = BUNDLE_LABELS,
  timeoutMs = 30_000,
): Promise<ResolutionRequest> {
  await createRequest(scn.admin, newRequest(scn.namespace, name, labels, params));
  return waitForRequest(scn, name, finished, timeoutMs);
}

/** Quarry's finer failure reason of a finished request. */
export function reasonOf(rr: ResolutionRequest): string | undefined {
  return rr.status?.annotations?.["quarry.dev/reason"];
}

/** Lets the bundle resolver read Secrets and ServiceAccounts in the namespace (the opt-in). */
export function grantCredentialAccess(scn: Scenario, namespace = scn.namespace): Promise<void> {
  return grantOptInRules(scn, {
    service: "bundle-resolver",
    rulesKey: "credentialRules",
    role: "quarry-bundle-resolver-credentials",
    namespace,
  });
}

/** A kubernetes.io/dockerconfigjson Secret for `host` with `creds`. */
export async function createPullSecret(
  scn: Scenario,
  name: string,
  host: string,
  creds: Creds,
): Promise<void> {
  const auth = Buffer.from(`${creds.username}:${creds.password}`).toString("base64");
  const config = JSON.stringify({ auths: { [host]: { auth } } });
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: scn.namespace },
    type: "kubernetes.io/dockerconfigjson",
    data: { ".dockerconfigjson": Buffer.from(config).toString("base64") },
  });
}
