// Tekton Pipelines as Quarry's client: a private control plane with Tekton's own CRDs (all but
// ResolutionRequest, which is Quarry's CRD as on a Tekton cluster running Quarry), config maps
// and RBAC, Tekton's pipelines controller (built from the Go module proxy) as a process under
// its own ServiceAccount, and Quarry's lifecycle controller and git, bundle and cluster resolvers
// as processes scoped to the scenario's namespace (or the services a scenario names, e.g. the
// wait-task and the run-controller for CustomRuns), with a git server and a registry for them.
// Private: Tekton's structural CRDs for Task/Pipeline and its CustomRun CRD would replace the
// stand-ins and Quarry's run CRDs the other scenarios share. No node: pods Tekton creates stay
// pending, so the scenarios assert on resolution and on CustomRuns (no pod) only.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import type { ChildReference, RefSource, ResolutionRequest } from "@quarry/api";
import { resolutionRequests } from "@quarry/api";
import { ALL_IN_ONE_SA } from "@quarry/devcluster/all-in-one";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { installQuarryApi } from "@quarry/devcluster/install";
import { type Registry, startRegistry } from "@quarry/devcluster/registry";
import {
  buildTekton,
  installTektonPipelines,
  startTektonController,
  type TektonController,
} from "@quarry/devcluster/tekton";
import { waitUntil } from "@quarry/devcluster/wait";
import type { KubeObject, ResourceType } from "@quarry/kube";
import yaml from "js-yaml";
import { adminClient } from "./env.ts";
import { dataOf, newScenario, type Scenario, setLifecycleConfig, succeeded } from "./scenario.ts";

export const taskRuns: ResourceType = {
  group: "tekton.dev",
  version: "v1",
  plural: "taskruns",
  kind: "TaskRun",
  namespaced: true,
};
export const pipelineRuns: ResourceType = { ...taskRuns, plural: "pipelineruns", kind: "PipelineRun" };

export interface RunCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The parts of a TaskRun's or PipelineRun's status the interop scenarios read. */
export interface TektonRun extends KubeObject {
  spec: Record<string, unknown>;
  status?: {
    conditions?: RunCondition[];
    taskSpec?: Record<string, unknown>;
    pipelineSpec?: Record<string, unknown>;
    provenance?: { refSource?: RefSource };
    /** PipelineRun: the TaskRuns and CustomRuns it created (TEP-0100). */
    childReferences?: (ChildReference & { pipelineTaskName: string })[];
    /** PipelineRun: its pipeline's results. */
    results?: { name: string; value: unknown }[];
  };
}

export interface TektonCluster {
  cp: ControlPlane;
  scn: Scenario;
  tekton: TektonController;
  gitServer: GitServer;
  /** URL of the definitions repository. */
  gitUrl: string;
  /** Commit of its main branch. */
  gitCommit: string;
  registry: Registry;
}

export interface TektonClusterOptions {
  /** Files committed to the definitions repository (main). */
  gitFiles: Record<string, string>;
  /** lifecycle-controller-config written before Quarry's lifecycle controller starts. */
  lifecycleConfig?: Record<string, string>;
  /** Runs once the servers and the namespace exist, before any controller starts (bundles, Tasks). */
  setup?: (t: Omit<TektonCluster, "tekton">) => Promise<void>;
  /**
   * Quarry's processes to start, each with its env (default: the lifecycle controller and the
   * git, bundle and cluster resolvers). The CustomRun scenarios start a custom task's controller.
   * A function is called after `setup`, so an env can name a server `setup` started.
   */
  services?:
    | Record<string, Record<string, string>>
    | ((t: Omit<TektonCluster, "tekton">) => Record<string, Record<string, string>>);
  /** Write kube-apiserver's audit log, so a scenario can say who wrote each request's status. */
  auditLog?: boolean;
}

const RESOLUTION_SERVICES = ["lifecycle-controller", "git-resolver", "bundle-resolver", "cluster-resolver"];

export function useTektonCluster(prefix: string, opts: TektonClusterOptions): () => TektonCluster {
  let state: TektonCluster | undefined;
  let cp: ControlPlane | undefined;
  let scn: Scenario | undefined;
  let gitServer: GitServer | undefined;
  let registry: Registry | undefined;
  let tekton: TektonController | undefined;
  const cacheDir = mkdtempSync(join(tmpdir(), `quarry-e2e-${prefix}-cache-`));
  before(async () => {
    // built by quarry_setup in the background; waits on its lock, minutes the first time
    const tektonDir = await buildTekton();
    cp = await startControlPlane({ keep: process.env.QUARRY_E2E_KEEP === "1", auditLog: opts.auditLog });
    const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
    const admin = adminClient(info);
    // Tekton owns CustomRun: none of Quarry's run CRDs
    await installQuarryApi(admin, { runCrds: "none" });
    await installTektonPipelines(admin, tektonDir);
    scn = await newScenario(prefix, { cp: info });
    // the ServiceAccount TaskRuns run as (config-defaults): Tekton reads it before creating a pod
    await applyObject(admin, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: scn.namespace },
    });
    gitServer = await startGitServer();
    const builder = await RepoBuilder.create(gitServer.root, "defs.git");
    for (const [path, content] of Object.entries(opts.gitFiles)) builder.write(path, content);
    const gitCommit = await builder.commit("definitions");
    await builder.push();
    builder.dispose();
    registry = await startRegistry();
    const partial = { cp, scn, gitServer, gitUrl: gitServer.url("defs.git"), gitCommit, registry };
    await opts.setup?.(partial);
    if (opts.lifecycleConfig) await setLifecycleConfig(scn, opts.lifecycleConfig);
    const services =
      typeof opts.services === "function"
        ? opts.services(partial)
        : (opts.services ?? Object.fromEntries(RESOLUTION_SERVICES.map((s) => [s, {}])));
    for (const [service, env] of Object.entries(services))
      await scn.start(service, service === "git-resolver" ? { QUARRY_GIT_CACHE_DIR: cacheDir, ...env } : env);
    tekton = await startTektonController(admin, {
      cp: info,
      tektonDir,
      logFile: join(cp.dir, "logs", `${scn.namespace}-tekton-controller.log`),
    });
    state = { ...partial, tekton };
  });
  after(async () => {
    await tekton?.stop();
    await scn?.cleanup();
    await gitServer?.stop();
    await registry?.dispose();
    await cp?.stop();
    rmSync(cacheDir, { recursive: true, force: true });
  });
  return () => {
    if (!state) throw new Error("Tekton cluster used outside a test");
    return state;
  };
}

export function params(values: Record<string, string>): { name: string; value: string }[] {
  return Object.entries(values).map(([name, value]) => ({ name, value }));
}

/** Creates a TaskRun or PipelineRun as a user would (no webhook: the spec is complete). */
export function createRun(t: TektonCluster, rt: ResourceType, name: string, spec: Record<string, unknown>) {
  return t.scn.admin.create<TektonRun>(rt, {
    apiVersion: "tekton.dev/v1",
    kind: rt.kind,
    metadata: { name, namespace: t.scn.namespace },
    spec,
  });
}

export function waitRun(
  t: TektonCluster,
  rt: ResourceType,
  name: string,
  what: string,
  ready: (run: TektonRun) => boolean,
  timeoutMs = 60_000,
): Promise<TektonRun> {
  return waitUntil(
    `${rt.kind} ${name}: ${what}`,
    async () => {
      const run = await t.scn.admin.get<TektonRun>(rt, t.scn.namespace, name);
      return ready(run) ? run : undefined;
    },
    { timeoutMs },
  );
}

export const succeededOf = (run: TektonRun) => run.status?.conditions?.find((c) => c.type === "Succeeded");

/** The ResolutionRequest Tekton's controller created for a run (it owns it). */
export async function requestOwnedBy(t: TektonCluster, run: TektonRun): Promise<ResolutionRequest> {
  return waitUntil(`the ResolutionRequest of ${run.kind} ${run.metadata.name}`, async () => {
    const list = await t.scn.admin.list<ResolutionRequest>(resolutionRequests, t.scn.namespace);
    return list.items.find((rr) => rr.metadata.ownerReferences?.some((o) => o.uid === run.metadata.uid));
  });
}

/**
 * `actual` holds everything `expected` says (objects key by key, arrays element by element, same
 * length); Tekton may add defaults (e.g. a param's `type: string`) to what it stores.
 */
export function assertContains(actual: unknown, expected: unknown, path = "$"): void {
  if (expected === null || typeof expected !== "object") {
    if (actual !== expected)
      throw new Error(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      throw new Error(`${path}: expected ${expected.length} items, got ${JSON.stringify(actual)}`);
    expected.forEach((e, i) => {
      assertContains(actual[i], e, `${path}[${i}]`);
    });
    return;
  }
  if (actual === null || typeof actual !== "object" || Array.isArray(actual))
    throw new Error(`${path}: expected an object, got ${JSON.stringify(actual)}`);
  for (const [k, v] of Object.entries(expected))
    assertContains((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
}

/**
 * The users whose PATCH or PUT of `request`'s status succeeded, from the audit log (a cluster
 * started with `auditLog`), e.g. `system:serviceaccount:<ns>:quarry-http-resolver`. Waits until
 * `including` is one of them: the apiserver writes an event once its response is sent.
 */
export function statusWritersOf(t: TektonCluster, request: string, including: string): Promise<string[]> {
  const file = t.cp.auditLog;
  if (!file) throw new Error("statusWritersOf needs a Tekton cluster started with auditLog");
  return waitUntil(`an audited status write of ResolutionRequest ${request}`, async () => {
    const writers = new Set<string>();
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line.includes('"resolutionrequests"')) continue;
      let e: AuditEvent;
      try {
        e = JSON.parse(line) as AuditEvent;
      } catch {
        continue; // a line still being written
      }
      const ref = e.objectRef;
      const ok = (e.responseStatus?.code ?? 0) < 300;
      if (ref?.subresource === "status" && ref.name === request && ok && WRITES.has(e.verb ?? ""))
        writers.add(e.user?.username ?? "");
    }
    return writers.has(including) ? [...writers].sort() : undefined;
  });
}

/** Every user the audit log saw whose name starts with `prefix` (e.g. a namespace's ServiceAccounts). */
export function auditedUsers(t: TektonCluster, prefix: string): string[] {
  const file = t.cp.auditLog;
  if (!file) throw new Error("auditedUsers needs a Tekton cluster started with auditLog");
  const users = new Set<string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /"username":"([^"]*)"/.exec(line);
    if (m?.[1]?.startsWith(prefix)) users.add(m[1]);
  }
  return [...users].sort();
}

/** The ServiceAccount user each of Quarry's processes in the scenario runs as, by service. */
export function quarryUsers(t: TektonCluster): Map<string, string> {
  const users = new Map(
    [...t.scn.identities].map(([service, id]) => [
      service,
      `system:serviceaccount:${id.namespace}:${id.serviceAccount}`,
    ]),
  );
  // in all-in-one mode the components run as the one process's ServiceAccount
  for (const service of t.scn.allInOne?.services ?? [])
    users.set(service, `system:serviceaccount:${t.scn.namespace}:${ALL_IN_ONE_SA}`);
  return users;
}

/** The users Tekton's release runs its resolvers Deployment as (config/resolvers). */
export const TEKTON_RESOLVERS_USERS = "system:serviceaccount:tekton-pipelines-resolvers:";

/** Tekton's pipelines controller, whose ResolutionRequest reconciler initialises and times out requests. */
export const TEKTON_CONTROLLER_USER = "system:serviceaccount:tekton-pipelines:tekton-pipelines-controller";

/**
 * Tekton's resolvers at zero replicas, as an operator leaves them for Quarry: this harness never
 * starts Tekton's `resolvers` process, and this shows nothing else answered in its place. Every
 * successful status write of `request` was made by one of Quarry's processes, `service` (the
 * resolver expected to answer) among them, or by Tekton's pipelines controller (its
 * ResolutionRequest reconciler marks a request started and times it out; it never resolves), and
 * no user of Tekton's resolvers namespace made any API call at all.
 */
export async function assertAnsweredByQuarry(t: TektonCluster, request: string, service: string) {
  const quarry = quarryUsers(t);
  const resolver = quarry.get(service);
  if (!resolver) throw new Error(`${service} is not one of this scenario's processes`);
  const writers = await statusWritersOf(t, request, resolver);
  const allowed = new Set([...quarry.values(), TEKTON_CONTROLLER_USER]);
  const others = writers.filter((w) => !allowed.has(w));
  if (others.length > 0)
    throw new Error(
      `${request}: status written by ${others.join(", ")} (all writers: ${writers.join(", ")})`,
    );
  const tekton = auditedUsers(t, TEKTON_RESOLVERS_USERS);
  if (tekton.length > 0) throw new Error(`Tekton's resolvers made API calls as ${tekton.join(", ")}`);
}

const WRITES = new Set(["patch", "update"]);

interface AuditEvent {
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; name?: string };
  responseStatus?: { code?: number };
}

/** What Tekton's own resolver would have answered for a run's request, computed as Tekton computes it. */
export interface TektonAnswer {
  /** The request's type label (`resolution.tekton.dev/type`). */
  type: string;
  /** Quarry's process expected to answer it. */
  service: string;
  /** The YAML, byte for byte. */
  data: string;
  refSource: RefSource;
}

/**
 * Waits for run `name` to store its definition, then holds Quarry to what Tekton's resolver would
 * have produced: the request's data and refSource, the spec Tekton stored (it adds defaults) and
 * its status.provenance.refSource, and no other resolver answering (`assertAnsweredByQuarry`).
 */
export async function expectResolvedAsTekton(
  t: TektonCluster,
  rt: ResourceType,
  name: string,
  want: TektonAnswer,
): Promise<{ run: TektonRun; request: ResolutionRequest }> {
  const specField = rt.kind === "TaskRun" ? "taskSpec" : "pipelineSpec";
  const run = await waitRun(
    t,
    rt,
    name,
    `status.${specField} stored`,
    (x) => x.status?.[specField] !== undefined || succeededOf(x)?.status === "False",
  );
  if (run.status?.[specField] === undefined)
    throw new Error(`${rt.kind} ${name} failed: ${JSON.stringify(succeededOf(run))}`);
  const request = await requestOwnedBy(t, run);
  const label = request.metadata.labels?.["resolution.tekton.dev/type"];
  if (label !== want.type) throw new Error(`${name}: request type ${label}, not ${want.type}`);
  const cond = succeeded(request);
  if (cond?.status !== "True") throw new Error(`${name}: request not resolved: ${JSON.stringify(cond)}`);
  if (dataOf(request) !== want.data)
    throw new Error(
      `${name}: data differs from Tekton's\n--- Quarry\n${dataOf(request)}\n--- Tekton\n${want.data}`,
    );
  assertContains(request.status?.refSource, want.refSource, `${name}: request refSource`);
  assertContains(want.refSource, request.status?.refSource, `${name}: request refSource (no extra keys)`);
  assertContains(run.status?.provenance?.refSource, want.refSource, `${name}: status.provenance.refSource`);
  const doc = yaml.load(want.data) as { spec: Record<string, unknown> };
  assertContains(run.status?.[specField], doc.spec, `${name}: status.${specField}`);
  await assertAnsweredByQuarry(t, request.metadata.name!, want.service);
  return { run, request };
}

/**
 * Waits for run `name` to fail and holds it to Tekton's reason for a resolution failure, its
 * message carrying the message of Quarry's failed request; returns both.
 */
export async function expectResolutionFailure(
  t: TektonCluster,
  rt: ResourceType,
  name: string,
  want: { service: string; runReason: string },
): Promise<{ run: TektonRun; request: ResolutionRequest }> {
  const run = await waitRun(t, rt, name, "failed", (x) => succeededOf(x)?.status === "False");
  const request = await requestOwnedBy(t, run);
  const cond = succeeded(request);
  if (cond?.status !== "False") throw new Error(`${name}: request not failed: ${JSON.stringify(cond)}`);
  const runCond = succeededOf(run);
  if (runCond?.reason !== want.runReason)
    throw new Error(`${name}: run reason ${runCond?.reason}, not ${want.runReason}: ${runCond?.message}`);
  if (!runCond.message?.includes(cond.message ?? "<none>"))
    throw new Error(
      `${name}: the run's message does not carry Quarry's\n  run: ${runCond.message}\n  Quarry: ${cond.message}`,
    );
  if (run.status?.provenance?.refSource !== undefined) throw new Error(`${name}: provenance for a failure`);
  await assertAnsweredByQuarry(t, request.metadata.name!, want.service);
  return { run, request };
}
