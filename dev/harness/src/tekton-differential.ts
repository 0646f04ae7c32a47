// A differential run against Tekton Pipelines' own resolvers: the same ResolutionRequests (same
// params, new names) answered once by Tekton's `resolvers` process (v1.15, built by
// build-tekton.sh, config/resolvers installed as released) with none of Quarry's resolvers
// running, then, Tekton's resolvers stopped (at zero, as an operator leaves them), once by
// Quarry's. Quarry's lifecycle controller initialises and completes the requests of both runs:
// Tekton's resolvers answer a request whatever initialised it (their reconciler skips only a
// done or resolved one) and write data without a condition, which a lifecycle reconciler turns
// into Succeeded=True, as Tekton's controller does.
//
// One private control plane (Tekton's CRDs, leases and RBAC are cluster-wide), a git server, a
// registry, an HTTP server and two hub protocol fixtures on loopback. Tekton's process runs in a
// network namespace of its own and reaches them only through bridged host ports.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import type { RefSource, ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { installQuarryApi } from "@quarry/devcluster/install";
import { type Registry, startRegistry } from "@quarry/devcluster/registry";
import { buildTekton, installTektonPipelines } from "@quarry/devcluster/tekton";
import { installTektonResolvers, startTektonResolvers } from "@quarry/devcluster/tekton-resolvers";
import { adminClient } from "./env.ts";
import { type HttpFixture, startHttpFixture } from "./http-server.ts";
import { type HubFixture, startHubFixture } from "./hub-fixture.ts";
import {
  createRequest,
  finished,
  newRequest,
  newScenario,
  type Scenario,
  setConfig,
  succeeded,
  waitForRequest,
} from "./scenario.ts";

export type ResolverType = "git" | "bundles" | "cluster" | "http" | "hub";

/** Quarry's process answering each type. */
const QUARRY_RESOLVER: Record<ResolverType, string> = {
  git: "git-resolver",
  bundles: "bundle-resolver",
  cluster: "cluster-resolver",
  http: "http-resolver",
  hub: "hub-resolver",
};

export interface DifferentialWorld {
  cp: ControlPlane;
  scn: Scenario;
  git: GitServer;
  registry: Registry;
  web: HttpFixture;
  /** Two hubs: the one the env names, and one only a request's `url` param names. */
  hubs: [HubFixture, HubFixture];
}

export interface DifferentialCase {
  /** The requests are `tekton-<name>` and `quarry-<name>`. */
  name: string;
  type: ResolverType;
  params: Record<string, string>;
}

export interface DifferentialOptions {
  /** Fills the servers and creates objects, before either side starts. */
  setup: (w: DifferentialWorld) => Promise<void>;
  cases: (w: DifferentialWorld) => DifferentialCase[];
  /** Each resolver ConfigMap's data, for both sides: Tekton's (merged over the released) and Quarry's. */
  config?: (w: DifferentialWorld) => Record<string, Record<string, string>>;
  /** Env of Tekton's process and of Quarry's resolvers alike (ARTIFACT_HUB_API, TEKTON_HUB_API). */
  env?: (w: DifferentialWorld) => Record<string, string>;
}

/** One case's two answers, each request as it finished. */
export interface Answers {
  tekton: ResolutionRequest;
  quarry: ResolutionRequest;
}

export interface Differential {
  world: DifferentialWorld;
  answers: Map<string, Answers>;
}

/** How long one side may take to finish all its requests. */
const SIDE_TIMEOUT_MS = 90_000;

export function useDifferential(prefix: string, opts: DifferentialOptions): () => Differential {
  let state: Differential | undefined;
  const stops: (() => Promise<unknown>)[] = [];
  const cacheDir = mkdtempSync(join(tmpdir(), `quarry-e2e-${prefix}-cache-`));
  before(async () => {
    // built by quarry_setup in the background; waits on its lock, minutes the first time
    const tektonDir = await buildTekton();
    const cp = await startControlPlane({ keep: process.env.QUARRY_E2E_KEEP === "1" });
    stops.push(() => cp.stop());
    const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
    const admin = adminClient(info);
    await installQuarryApi(admin, { runCrds: "none" });
    await installTektonPipelines(admin, tektonDir);
    const scn = await newScenario(prefix, { cp: info });
    stops.push(() => scn.cleanup());
    // Tekton's bundle resolver reads the request namespace's default ServiceAccount up front
    await applyObject(admin, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: scn.namespace },
    });
    const git = await startGitServer();
    stops.push(() => git.stop());
    const registry = await startRegistry();
    stops.push(() => registry.dispose());
    const web = await startHttpFixture();
    stops.push(() => web.close());
    const hubs: [HubFixture, HubFixture] = [await startHubFixture(), await startHubFixture()];
    stops.push(() => Promise.all(hubs.map((h) => h.close())));
    const world: DifferentialWorld = { cp, scn, git, registry, web, hubs };
    await opts.setup(world);
    const cases = opts.cases(world);
    const config = opts.config?.(world) ?? {};
    const env = opts.env?.(world) ?? {};
    await installTektonResolvers(admin, config);
    for (const [name, data] of Object.entries(config)) await setConfig(scn, name, data);
    await scn.start("lifecycle-controller");

    const tektonResolvers = await startTektonResolvers(admin, {
      cp: info,
      tektonDir,
      logFile: join(cp.dir, "logs", `${scn.namespace}-tekton-resolvers.log`),
      hostPorts: [git.port, registry.port, ...[web.base, ...hubs.map((h) => h.base)].map(portOf)],
      env,
    });
    let tekton: Map<string, ResolutionRequest>;
    try {
      tekton = await answerAll(scn, "tekton", cases);
    } finally {
      await tektonResolvers.stop();
    }
    for (const type of new Set(cases.map((c) => c.type)))
      await scn.start(
        QUARRY_RESOLVER[type],
        type === "git" ? { QUARRY_GIT_CACHE_DIR: cacheDir, ...env } : env,
      );
    const quarry = await answerAll(scn, "quarry", cases);
    const answers = new Map(
      cases.map((c) => [c.name, { tekton: tekton.get(c.name)!, quarry: quarry.get(c.name)! }]),
    );
    state = { world, answers };
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    rmSync(cacheDir, { recursive: true, force: true });
  });
  return () => {
    if (!state) throw new Error("differential used outside a test");
    return state;
  };
}

const portOf = (base: string) => Number(new URL(base).port);

/** Creates one side's requests at once and waits for each to finish; by case name. */
async function answerAll(
  scn: Scenario,
  side: "tekton" | "quarry",
  cases: readonly DifferentialCase[],
): Promise<Map<string, ResolutionRequest>> {
  const labels = (type: ResolverType) => ({ "resolution.tekton.dev/type": type });
  await Promise.all(
    cases.map((c) =>
      createRequest(scn.admin, newRequest(scn.namespace, `${side}-${c.name}`, labels(c.type), c.params)),
    ),
  );
  const done = await Promise.all(
    cases.map((c) => waitForRequest(scn, `${side}-${c.name}`, finished, SIDE_TIMEOUT_MS)),
  );
  return new Map(cases.map((c, i) => [c.name, done[i]!]));
}

/** The `resolution.tekton.dev/*` annotations of a request's status. */
export function tektonAnnotations(rr: ResolutionRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rr.status?.annotations ?? {}).filter(([k]) => k.startsWith("resolution.tekton.dev/")),
  );
}

/** The Succeeded condition's status and reason, for a failure's comparison. */
export function outcomeOf(rr: ResolutionRequest): { status?: string; reason?: string } {
  const c = succeeded(rr);
  return { status: c?.status, reason: c?.reason };
}

/** A request's data, decoded to its bytes. */
const bytesOf = (rr: ResolutionRequest) => Buffer.from(rr.status?.data ?? "", "base64");

export interface SameAnswerOptions {
  /**
   * `resolution.tekton.dev/*` annotations Quarry may set where Tekton's resolver sets none, beside
   * the runtime's content type (`resolution.tekton.dev/content-type`), which Quarry sets on every answer.
   */
  additive?: string[];
  /**
   * The data and `refSource.digest` differ by design (the cluster resolver: docs/tekton-drop-in.md
   * §6, "refSource and digests"): they are left out, the rest of refSource and source compared.
   */
  dataAndDigestDiffer?: boolean;
}

/** The manager Tekton's `resolvers` process writes under (its client's user agent). */
const TEKTON_RESOLVERS_MANAGER = "resolvers";

/** The managers of a request's status fields (metadata.managedFields). */
const statusManagers = (rr: ResolutionRequest) =>
  ((rr.metadata as { managedFields?: { manager?: string; subresource?: string }[] }).managedFields ?? [])
    .filter((f) => f.subresource === "status")
    .map((f) => f.manager);

/** Each side's request was answered by that side: Tekton's by its resolvers process, Quarry's not. */
function expectAnsweredBy(name: string, { tekton, quarry }: Answers): void {
  assert.ok(
    statusManagers(tekton).includes(TEKTON_RESOLVERS_MANAGER),
    `${name}: Tekton's request not written by Tekton's resolvers (${statusManagers(tekton).join(", ")})`,
  );
  assert.ok(
    !statusManagers(quarry).includes(TEKTON_RESOLVERS_MANAGER),
    `${name}: Quarry's request written by Tekton's resolvers`,
  );
}

const CONTENT_TYPE = "resolution.tekton.dev/content-type";
const CACHE_TIMESTAMP = "resolution.tekton.dev/cache-timestamp";
const CACHE_OPERATION = "resolution.tekton.dev/cache-operation";

/**
 * Every `resolution.tekton.dev/*` annotation Tekton's resolver set, Quarry's set alike, and no
 * other but `additive`. The cache's timestamp says when each side stored its entry: both must
 * carry one that reads as a time (Tekton writes whole seconds, Quarry milliseconds). Tekton's
 * resolver may answer a request twice, the second time from its cache (the lifecycle reconciler's
 * first status write races its answer, and it skips only a request its informer already sees
 * resolved): its `retrieve` then stands for the first answer's `store`.
 */
function expectSameAnnotations(
  name: string,
  { tekton, quarry }: Answers,
  additive: ReadonlySet<string>,
): void {
  const [ta, qa] = [tektonAnnotations(tekton), tektonAnnotations(quarry)];
  if (ta[CACHE_OPERATION] === "retrieve") ta[CACHE_OPERATION] = "store";
  const at = (a: Record<string, string | undefined>) => ({ ...a, [CACHE_TIMESTAMP]: undefined });
  const shared = Object.fromEntries(Object.keys(ta).map((k) => [k, qa[k]]));
  assert.deepEqual(
    at(shared),
    at(ta),
    `${name}: resolution.tekton.dev annotations (Quarry's: ${JSON.stringify(qa)})`,
  );
  if (ta[CACHE_TIMESTAMP] !== undefined)
    assert.ok(
      !Number.isNaN(Date.parse(qa[CACHE_TIMESTAMP] ?? "")),
      `${name}: ${CACHE_TIMESTAMP} ${qa[CACHE_TIMESTAMP]}, Tekton's ${ta[CACHE_TIMESTAMP]}`,
    );
  const extra = Object.keys(qa).filter((k) => !(k in ta) && !additive.has(k));
  assert.deepEqual(extra, [], `${name}: annotations only Quarry's set`);
}

/**
 * Both resolved, each by its side's process, to the same data byte for byte, the same `refSource`
 * and `source`, and the same `resolution.tekton.dev/*` annotations (expectSameAnnotations).
 */
export function expectSameAnswer(name: string, answers: Answers, opts: SameAnswerOptions = {}): void {
  const { tekton, quarry } = answers;
  expectAnsweredBy(name, answers);
  assert.equal(succeeded(tekton)?.status, "True", `${name}: Tekton's: ${JSON.stringify(succeeded(tekton))}`);
  assert.equal(succeeded(quarry)?.status, "True", `${name}: Quarry's: ${JSON.stringify(succeeded(quarry))}`);
  if (!opts.dataAndDigestDiffer) {
    const [t, q] = [bytesOf(tekton), bytesOf(quarry)];
    assert.ok(t.equals(q), `${name}: data differs\n--- Tekton\n${t}\n--- Quarry\n${q}`);
  }
  const strip = (ref: RefSource | undefined) =>
    opts.dataAndDigestDiffer ? { ...ref, digest: undefined } : ref;
  assert.deepEqual(strip(quarry.status?.refSource), strip(tekton.status?.refSource), `${name}: refSource`);
  assert.deepEqual(strip(quarry.status?.source), strip(tekton.status?.source), `${name}: source`);
  expectSameAnnotations(name, answers, new Set([CONTENT_TYPE, ...(opts.additive ?? [])]));
}

/**
 * Both failed for good, with no data: the Succeeded condition False with the same reason (Quarry
 * keeps Tekton's, docs/tekton-drop-in.md §6 "Reasons"); messages differ by design.
 */
export function expectSameFailure(name: string, answers: Answers): void {
  const { tekton, quarry } = answers;
  expectAnsweredBy(name, answers);
  const [t, q] = [outcomeOf(tekton), outcomeOf(quarry)];
  assert.equal(t.status, "False", `${name}: Tekton's: ${JSON.stringify(succeeded(tekton))}`);
  assert.deepEqual(
    q,
    t,
    `${name}: Quarry's ${JSON.stringify(succeeded(quarry))}, Tekton's ${JSON.stringify(succeeded(tekton))}`,
  );
  assert.equal(quarry.status?.data ?? "", "", `${name}: Quarry's data on a failure`);
  assert.equal(tekton.status?.data ?? "", "", `${name}: Tekton's data on a failure`);
}
