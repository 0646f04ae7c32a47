// Runs whose definition is remote (TEP-0002 `ref`/`customRef` with `resolver`
// + `params`): a git server holding the definitions, optionally a registry for
// bundles, the lifecycle controller, the resolvers a scenario names and the
// run-controller, all started before any test creates a run. The custom-task
// controller (wait-task) is left for the test to start, so tests can show
// what happens before anyone handles the run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { AnyRun, RunFlavour, RunRef } from "@quarry/api";
import { RepoBuilder } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { type Registry, startRegistry } from "@quarry/devcluster/registry";
import { WAIT_REF } from "./runs.ts";
import { type Scenario, setConfig, useScenario } from "./scenario.ts";

/** status.annotations key where the run-controller names the run's request (its wire contract). */
export const ANNOTATION_RUN_REQUEST = "quarry.dev/resolution-request";
/** status.annotations key holding the request's refSource as JSON. */
export const ANNOTATION_RUN_REF_SOURCE = "quarry.dev/ref-source";

export type ResolverName = "git" | "bundles" | "cluster";

const SERVICE: Record<ResolverName, string> = {
  git: "git-resolver",
  bundles: "bundle-resolver",
  cluster: "cluster-resolver",
};

/** A Tekton Task declaring Wait's `duration` param with a default (what Wait reads from a remote ref). */
export function waitTaskYaml(name: string, duration = "1s", description = ""): string {
  const desc = description ? `  description: ${JSON.stringify(description)}\n` : "";
  return `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: ${name}
spec:
${desc}  params:
    - name: duration
      type: string
      default: "${duration}"
  steps:
    - name: wait
      image: busybox
      script: sleep 1
`;
}

export interface RunRefScenario {
  scn: Scenario;
  gitServer: GitServer;
  /** URL of the definitions repository. */
  gitUrl: string;
  /** Commit of its main branch. */
  gitCommit: string;
  registry: Registry | undefined;
}

export interface RunRefOptions {
  resolvers: ResolverName[];
  /** Files committed to the definitions repository (main). */
  gitFiles?: Record<string, string>;
  /** Start a registry (for bundles). */
  registry?: boolean;
  /** Runs once the git server, registry and namespace exist, before any service starts. */
  setup?: (r: RunRefScenario) => Promise<void>;
}

export function useRunRefScenario(prefix: string, opts: RunRefOptions): () => RunRefScenario {
  let state: RunRefScenario | undefined;
  let builder: RepoBuilder | undefined;
  const cacheDir = mkdtempSync(join(tmpdir(), `quarry-e2e-${prefix}-cache-`));
  const scenario = useScenario(prefix, {
    setup: async (scn) => {
      const gitServer = await startGitServer();
      builder = await RepoBuilder.create(gitServer.root, "defs.git");
      for (const [path, content] of Object.entries(opts.gitFiles ?? { "README.md": "definitions\n" }))
        builder.write(path, content);
      const gitCommit = await builder.commit("definitions");
      await builder.push();
      const registry = opts.registry ? await startRegistry() : undefined;
      state = { scn, gitServer, gitUrl: gitServer.url("defs.git"), gitCommit, registry };
      await opts.setup?.(state);
      // no custom-task controller runs at first: the initial-update timeout must not end the runs
      await setConfig(scn, "run-controller-config", {
        "initial-update-timeout": "10m",
        "enforcement-grace": "1s",
      });
      await scn.start("lifecycle-controller");
      for (const r of opts.resolvers)
        await scn.start(SERVICE[r], r === "git" ? { QUARRY_GIT_CACHE_DIR: cacheDir } : {});
      await scn.start("run-controller");
    },
  });
  after(async () => {
    builder?.dispose();
    await state?.gitServer.stop();
    await state?.registry?.dispose();
    rmSync(cacheDir, { recursive: true, force: true });
  });
  return () => {
    scenario();
    if (!state) throw new Error("run-ref scenario used outside a test");
    return state;
  };
}

/** Wait's reference with a resolver and its params. */
export function waitRemoteRef(resolver: string, params: Record<string, string>): RunRef {
  return {
    ...WAIT_REF,
    resolver,
    params: Object.entries(params).map(([name, value]) => ({ name, value })),
  };
}

/** The name of the run's ResolutionRequest as the run-controller recorded it. */
export function recordedRequest(run: AnyRun): string | undefined {
  return run.status?.annotations?.[ANNOTATION_RUN_REQUEST];
}

export const runNameFor = (base: string, flavour: RunFlavour) => `${base}-${flavour.toLowerCase()}`;
