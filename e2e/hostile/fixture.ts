// The hostile-input suite's world: one namespace on the shared control plane
// with every resolver and controller running as its real process under its
// shipped RBAC (lifecycle, git, bundles, cluster, pipe, http, run-controller, Wait),
// a real git smart-HTTP server holding the standard repository, a hostile one
// (YAML bomb, deep nesting, binary, huge, multi-document) and a private one,
// a real registry with one good bundle, and Secrets that must never leak.
// The namespace skips the admission policy so the lifecycle controller, not
// the apiserver, meets requests without a resolver label.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeStrategies, pipes } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { buildStandardRepo, RepoBuilder, type StandardRepo } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { type Registry, startRegistry, tknBundlePush } from "@quarry/devcluster/registry";
import { TASK_YAML } from "@quarry/harness/bundle-scenario";
import { addPrivateRepo } from "@quarry/harness/git-scenario";
import { pipeObject, pipeStrategy } from "@quarry/harness/pipe-scenario";
import {
  mergeConfig,
  newScenario,
  type Scenario,
  setConfig,
  setLifecycleConfig,
} from "@quarry/harness/scenario";
import type { Ctx } from "./cases.ts";
import { type CredentialWorld, startCredentialWorld } from "./credentials-fixture.ts";
import {
  type EgressWorld,
  HOSTILE_BLOCKED_NETWORKS,
  SOURCE_ADDRESS,
  startEgressWorld,
} from "./egress-fixture.ts";
import { type HttpWorld, startHttpWorld } from "./http-fixture.ts";
import { startPipePolicyWorld } from "./pipe-fixture.ts";
import { type RealmWorld, startRealmWorld } from "./realm-fixture.ts";

/** Strings that must never appear in a status, an Event or a log. */
export const SECRETS = {
  /** The private repository's real token (in Secret git-creds). */
  gitToken: "hostile-real-git-token-7f3a91",
  /** A wrong token (in Secret wrong-creds). */
  wrongToken: "hostile-wrong-git-token-c41d02",
  /** A password written into a request's URL. */
  urlPassword: "hostile-url-password-93be5a",
  /** A token in a Secret of another namespace, which no request may read. */
  otherNamespaceToken: "hostile-other-ns-token-51e0c7",
  /** The password in pull Secret realm-pull, for a registry whose token realm is on another host. */
  registryPassword: "hostile-registry-password-2d8e64",
  /** The password in Secret http-creds, bound to the http rows' source only. */
  httpPassword: "hostile-http-password-0b6f2e",
  /** A git API token in Secret localhost-api-creds, bound to a forge on a name that resolves to a blocked address. */
  apiToken: "hostile-api-token-8c27d5",
} as const;

/**
 * The global timeout: long enough for every answer when all the rows land at once on a loaded
 * 2-core machine (steps took 1-30 s there, the fixture git server resetting connections under
 * ~60 concurrent fetches), and the wait of the NoResolver rows.
 */
export const GLOBAL_TIMEOUT = "90s";

const YAML_BOMB = [
  "apiVersion: tekton.dev/v1",
  "kind: Task",
  "metadata: {name: bomb}",
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
  "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
  "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
  "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]",
  "spec: {steps: [{name: s, image: busybox, script: *h}]}",
  "",
].join("\n");

/** A Task whose spec nests 5,000 flow sequences deep. */
const DEEP = `apiVersion: tekton.dev/v1\nkind: Task\nmetadata: {name: deep}\nspec: {x: ${"[".repeat(5000)}${"]".repeat(5000)}}\n`;

export interface HostileWorld {
  scn: Scenario;
  ctx: Ctx;
  /** Capture servers and bindings of the credential rows (cases-credentials.ts). */
  credentials: CredentialWorld;
  /** Traps of the egress rows (cases-egress.ts). */
  egress: EgressWorld;
  /** The registry with an unbound token realm (cases-realm.ts). */
  realm: RealmWorld;
  /** Source, capture and trap of the http rows (cases-http.ts). */
  http: HttpWorld;
  dispose(): Promise<void>;
}

export async function startHostileWorld(): Promise<HostileWorld> {
  const scn = await newScenario("hostile", { skipAdmissionPolicy: true });
  let server: GitServer | undefined;
  let repo: StandardRepo | undefined;
  let registry: Registry | undefined;
  let credentials: CredentialWorld | undefined;
  let egress: EgressWorld | undefined;
  let realm: RealmWorld | undefined;
  let http: HttpWorld | undefined;
  let disposePipePolicy: (() => Promise<void>) | undefined;
  const cacheDir = mkdtempSync(join(tmpdir(), "quarry-e2e-hostile-cache-"));
  const dispose = async () => {
    await scn.cleanup();
    repo?.builder.dispose();
    await server?.stop();
    await registry?.dispose();
    await credentials?.dispose();
    await egress?.dispose();
    await realm?.dispose();
    await http?.dispose();
    await disposePipePolicy?.();
    rmSync(cacheDir, { recursive: true, force: true });
  };
  try {
    const ns = scn.namespace;
    const other = await scn.extraNamespace("hostile-other");
    // not on 127.0.0.1, which the resolvers here block (egress-fixture.ts)
    server = await startGitServer({ address: SOURCE_ADDRESS });
    repo = await buildStandardRepo(server.root);
    const hostile = await RepoBuilder.create(server.root, "hostile.git");
    hostile
      .write("bomb.yaml", YAML_BOMB)
      .write("deep.yaml", DEEP)
      .write("binary.bin", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131) % 256)))
      .write("nul.yaml", `apiVersion: tekton.dev/v1\nkind: Task\0\nmetadata: {name: nul}\n`)
      .write("two-docs.yaml", `${TASK_YAML}---\n${TASK_YAML}`)
      .write("empty.yaml", "")
      .write("configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n")
      .write("secret.json", '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{}}')
      .write("huge.yaml", `${TASK_YAML}# ${"y".repeat(2 * 1024 * 1024)}\n`);
    await hostile.commit("hostile content");
    await hostile.push();
    hostile.dispose();
    await addPrivateRepo(scn, server, "team/private.git", SECRETS.gitToken);
    await applyObject(scn.admin, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "wrong-creds", namespace: ns },
      stringData: { token: SECRETS.wrongToken },
    });
    await applyObject(scn.admin, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "elsewhere-creds", namespace: other },
      stringData: { token: SECRETS.otherNamespaceToken },
    });
    await applyObject(scn.admin, {
      apiVersion: "tekton.dev/v1",
      kind: "Task",
      metadata: { name: "foreign", namespace: other },
      spec: { steps: [{ name: "s", image: "busybox", script: "echo hi" }] },
    });
    await applyObject(scn.admin, {
      apiVersion: "tekton.dev/v1",
      kind: "Task",
      metadata: { name: "own", namespace: ns },
      spec: { steps: [{ name: "s", image: "busybox", script: "echo hi" }] },
    });

    registry = await startRegistry({ address: SOURCE_ADDRESS });
    const bundle = registry.ref("hostile/good:v1");
    await tknBundlePush(bundle, [TASK_YAML]);

    // pipe: one strategy and Pipe whose checks the requests fail; no node, so no pipe pod ever runs
    await scn.admin.create(
      pipeStrategies,
      pipeStrategy(
        ns,
        "gen",
        {
          volumes: [{ name: "out", emptyDir: {} }],
          initContainers: [
            {
              name: "gen",
              image: "busybox",
              command: ["sh", "-c", "echo $(params.cn) > /out/x"],
              volumeMounts: [{ name: "out", mountPath: "/out" }],
            },
          ],
        },
        [{ name: "cn" }, { name: "days", default: "1" }, { name: "tags", type: "array", default: [] }],
        // so these rows fail on their own faults, not on the strategy's policy (cases-pipe.ts)
        { outputs: [{ path: "/out/x", kind: "ConfigMap" }], allowInlineFiles: true },
      ),
    );
    await scn.admin.create(
      pipes,
      pipeObject(ns, "good", { kind: "PipeStrategy", name: "gen" }, [
        { file: "/out/x", kind: "ConfigMap", key: "x" },
      ]),
    );
    await grantOptInRules(scn, {
      service: "pipe-resolver",
      rulesKey: "pipeNamespaceRules",
      role: "quarry-pipe-resolver-namespace",
    });
    disposePipePolicy = await startPipePolicyWorld(scn, other);

    await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": GLOBAL_TIMEOUT });
    await setConfig(scn, "run-controller-config", {
      "initial-update-timeout": "60s",
      "enforcement-grace": "5s",
    });
    await scn.start("lifecycle-controller");
    // merges its keys into git-resolver-config: keep it after any setConfig of that ConfigMap
    credentials = await startCredentialWorld(scn, server);
    egress = await startEgressWorld(scn, SECRETS.apiToken);
    // git API mode: an operator token is configured (its Secret need not exist: the git-api-* rows
    // are refused before it would be read)
    await mergeConfig(scn, "git-resolver-config", {
      "server-url": "https://forge.quarry.test",
      "api-token-secret-name": "quarry-api-token",
    });
    realm = await startRealmWorld(scn, SECRETS.registryPassword);
    http = await startHttpWorld(scn, SECRETS.httpPassword);
    await scn.start("git-resolver", { QUARRY_GIT_CACHE_DIR: cacheDir });
    await scn.start("bundle-resolver");
    await scn.start("cluster-resolver");
    await scn.start("pipe-resolver");
    await scn.start("http-resolver");
    await mergeConfig(scn, "hubresolver-config", { "blocked-networks": HOSTILE_BLOCKED_NETWORKS });
    await scn.start("hub-resolver");
    await scn.start("run-controller");
    await scn.start("wait-task");

    const ctx: Ctx = {
      namespace: ns,
      otherNamespace: other,
      gitUrl: server.url(repo.name),
      hostileUrl: server.url("hostile.git"),
      privateUrl: server.url("team/private.git"),
      credentials: credentials.ctx,
      egress: egress.ctx,
      realm: realm.ctx,
      http: http.ctx,
      registryHost: registry.host,
      bundle,
    };
    return { scn, ctx, credentials, egress, realm, http, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
