// A git e2e scenario: the fixture git server (in the test process) with the
// standard repository, the git resolver running as its real process with its
// shipped RBAC and its own cache directory, and the lifecycle controller.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { buildStandardRepo, RepoBuilder, type StandardRepo, TASK_V1 } from "@quarry/devcluster/git-repos";
import { type GitServer, type GitServerOptions, startGitServer } from "@quarry/devcluster/git-server";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import type { RunningService } from "@quarry/devcluster/service";
import { type Scenario, setConfig, useScenario } from "./scenario.ts";

export interface GitScenario {
  scn: Scenario;
  server: GitServer;
  repo: StandardRepo;
  /** URL of the standard repository. */
  url: string;
  resolver: RunningService;
  cacheDir: string;
}

export interface GitScenarioOptions {
  /** How the fixture git server serves (address, TLS). */
  server?: GitServerOptions;
  /** git-resolver-config written before the resolver starts. */
  config?: Record<string, string>;
  /** Extra setup once the server and repository exist (more repositories, Secrets). */
  setup?: (g: Omit<GitScenario, "resolver">) => Promise<void>;
  /** Extra environment for the resolver, computed after setup (e.g. namespaces it made). */
  env?: (g: Omit<GitScenario, "resolver">) => Record<string, string>;
}

export const GIT_LABELS = { "resolution.tekton.dev/type": "git" };

export function useGitScenario(prefix: string, opts: GitScenarioOptions = {}): () => GitScenario {
  let state: GitScenario | undefined;
  let server: GitServer | undefined;
  let repo: StandardRepo | undefined;
  const cacheDir = mkdtempSync(join(tmpdir(), `quarry-e2e-${prefix}-cache-`));
  const scenario = useScenario(prefix, {
    start: ["lifecycle-controller"],
    setup: async (scn) => {
      server = await startGitServer(opts.server);
      repo = await buildStandardRepo(server.root);
      const url = server.url(repo.name);
      if (opts.config) await setConfig(scn, "git-resolver-config", opts.config);
      const g = { scn, server, repo, url, cacheDir };
      await opts.setup?.(g);
      const env = opts.env?.(g) ?? {};
      const resolver = await scn.start("git-resolver", { QUARRY_GIT_CACHE_DIR: cacheDir, ...env });
      state = { scn, server, repo, url, resolver, cacheDir };
    },
  });
  after(async () => {
    repo?.builder.dispose();
    await server?.stop();
    rmSync(cacheDir, { recursive: true, force: true });
  });
  return () => {
    scenario();
    if (!state) throw new Error("git scenario used outside a test");
    return state;
  };
}

/**
 * Lets the git resolver read Secrets in the scenario's namespace: the
 * opt-in a namespace makes in production (charts/git-resolver/rbac.yaml
 * tokenRules, bound by a RoleBinding in that namespace).
 */
export function grantTokenAccess(scn: Scenario, namespace = scn.namespace): Promise<void> {
  return grantOptInRules(scn, {
    service: "git-resolver",
    rulesKey: "tokenRules",
    role: "quarry-git-resolver-tokens",
    namespace,
  });
}

/**
 * A token Secret in the scenario's namespace. `boundTo`: URL prefixes the token may be sent to
 * (Tekton's `tekton.dev/git-<n>` annotations); without them the resolver never uses it.
 */
export async function createTokenSecret(
  scn: Scenario,
  name: string,
  data: Record<string, string>,
  boundTo: string[] = [],
): Promise<void> {
  const annotations = Object.fromEntries(boundTo.map((url, i) => [`tekton.dev/git-${i}`, url]));
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: scn.namespace, annotations },
    stringData: data,
  });
}

/**
 * git-resolver-config's `insecure-hosts` for a plain-http fixture server (its host:port), so a
 * token may go to it; nothing for an https one. Merge it into the scenario's config.
 */
export function insecureHostConfig(server: GitServer): Record<string, string> {
  const url = new URL(server.baseUrl);
  return url.protocol === "http:" ? { "insecure-hosts": url.host } : {};
}

/**
 * A private repository `path` on the server (task.yaml = TASK_V1) that wants `token`, a Secret
 * `git-creds` holding it in the scenario's namespace and bound to that repository's URL, and the
 * namespace's grant to read it. Over plain http the config also needs `insecureHostConfig(server)`.
 */
export async function addPrivateRepo(
  scn: Scenario,
  server: GitServer,
  path: string,
  token: string,
): Promise<void> {
  const priv = await RepoBuilder.create(server.root, path);
  priv.write("task.yaml", TASK_V1);
  await priv.commit("private");
  await priv.push();
  priv.dispose();
  server.setAuth(path, { token });
  await grantTokenAccess(scn);
  await createTokenSecret(scn, "git-creds", { token }, [server.url(path)]);
}
