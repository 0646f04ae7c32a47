// A git API-mode e2e scenario: a forge (the real Gitea, or the GitHub / GitLab protocol fixture)
// on loopback, git-resolver-config naming it (scm-type, server-url, the operator's token
// Secret), the operator's token Secret and the namespace's grant to read it, the git resolver
// as its real process under its shipped RBAC, and the lifecycle controller.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { type FixtureForge, type ForgeFixture, startForgeFixture } from "@quarry/devcluster/forge-fixtures";
import { type Gitea, startGitea } from "@quarry/devcluster/gitea";
import type { RunningService } from "@quarry/devcluster/service";
import { createTokenSecret, grantTokenAccess } from "./git-scenario.ts";
import { type Scenario, setConfig, useScenario } from "./scenario.ts";

export type ApiForge = { kind: "gitea"; gitea: Gitea } | { kind: FixtureForge; fixture: ForgeFixture };

export interface GitApiScenario {
  scn: Scenario;
  forge: ApiForge;
  /** The forge's server URL (server-url in the config). */
  serverUrl: string;
  /** The operator's API token (Secret `api-token` in the scenario's namespace). */
  operatorToken: string;
  resolver: RunningService;
}

export interface GitApiScenarioOptions {
  forge: "gitea" | FixtureForge;
  /** The operator's token; for Gitea, the admin's token is used. */
  operatorToken?: string;
  /** Repositories and Secrets made before the resolver starts. */
  setup?: (g: Omit<GitApiScenario, "resolver">) => Promise<void>;
  /** More git-resolver-config keys. */
  config?: Record<string, string>;
}

export function useGitApiScenario(prefix: string, opts: GitApiScenarioOptions): () => GitApiScenario {
  let state: GitApiScenario | undefined;
  let forge: ApiForge | undefined;
  const cacheDir = mkdtempSync(join(tmpdir(), `quarry-e2e-${prefix}-cache-`));
  const scenario = useScenario(prefix, {
    start: ["lifecycle-controller"],
    setup: async (scn) => {
      if (opts.forge === "gitea") forge = { kind: "gitea", gitea: await startGitea() };
      else forge = { kind: opts.forge, fixture: await startForgeFixture(opts.forge) };
      const serverUrl = forge.kind === "gitea" ? forge.gitea.baseUrl : forge.fixture.baseUrl;
      const operatorToken =
        forge.kind === "gitea" ? forge.gitea.admin.token : (opts.operatorToken ?? "e2e-operator-api-token");
      await grantTokenAccess(scn);
      await createTokenSecret(scn, "api-token", { token: operatorToken });
      await setConfig(scn, "git-resolver-config", {
        "scm-type": opts.forge,
        "server-url": serverUrl,
        "api-token-secret-name": "api-token",
        "api-token-secret-key": "token",
        "api-token-secret-namespace": scn.namespace,
        // the forges here are plain http on loopback: a token may go there only when listed
        "insecure-hosts": new URL(serverUrl).host,
        ...opts.config,
      });
      const g = { scn, forge, serverUrl, operatorToken };
      await opts.setup?.(g);
      const resolver = await scn.start("git-resolver", { QUARRY_GIT_CACHE_DIR: cacheDir });
      state = { ...g, resolver };
    },
  });
  after(async () => {
    if (forge?.kind === "gitea") await forge.gitea.stop();
    else await forge?.fixture.stop();
    rmSync(cacheDir, { recursive: true, force: true });
  });
  return () => {
    scenario();
    if (!state) throw new Error("git API scenario used outside a test");
    return state;
  };
}
