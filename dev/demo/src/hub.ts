// The demo's hub side. No public hub is reachable here, so the hub resolver
// talks to the harness's protocol fixture of Artifact Hub's API (the one the
// hub resolver's e2e scenarios use): a real HTTP server on loopback answering
// the endpoints, JSON fields and status codes Tekton's hub resolver reads, from
// a catalog the demo fills. It is not a hub: no search, no UI, one package.
import { type HubFixture, type HubFixtureVersion, startHubFixture } from "@quarry/harness/hub-fixture";
import type { Narrator } from "./narrator.ts";
import type { Teardown } from "./teardown.ts";

/** Tekton's default Artifact Hub catalog for Tasks, so the request needs no `catalog` param. */
export const HUB_CATALOG = "tekton-catalog-tasks";
export const HUB_TASK = "notify";
/** A go-version constraint, as Tekton's `version` param takes it. */
export const HUB_CONSTRAINT = ">= 0.2, < 1.0";
/** The highest release HUB_CONSTRAINT matches among HUB_VERSIONS. */
export const HUB_PICKED = "0.2.1";
/** Above HUB_PICKED: one the constraint excludes, and a pre-release, which the resolver never picks. */
export const HUB_PRERELEASE = "0.3.0-rc.1";
export const HUB_OUT_OF_RANGE = "1.0.0";
export const HUB_VERSIONS = ["0.1.0", "0.2.0", HUB_PICKED, HUB_PRERELEASE, HUB_OUT_OF_RANGE] as const;

/** Short enough that `quarry describe` shows all of it. */
export function notifyTask(version: string): string {
  return `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: ${HUB_TASK}
spec:
  steps:
    - name: notify
      image: busybox
      script: echo "notify ${version}, from the hub fixture"
`;
}

export interface DemoHub {
  fixture: HubFixture;
  /** Artifact Hub's API root on the fixture, as `artifact-hub-urls` lists it. */
  base: string;
}

/** Starts the fixture (stopped by the teardown) holding HUB_TASK at each of HUB_VERSIONS. */
export async function startDemoHub(teardown: Teardown, n: Narrator): Promise<DemoHub> {
  const fixture = await startHubFixture();
  teardown.add("the hub fixture", async () => {
    await fixture.close();
    n.sayAlways("hub fixture stopped");
  });
  const versions: HubFixtureVersion[] = HUB_VERSIONS.map((version) => ({
    version,
    prerelease: version.includes("-"),
    yaml: notifyTask(version),
  }));
  fixture.add({ hub: "artifact", catalog: HUB_CATALOG, kind: "task", name: HUB_TASK, versions });
  return { fixture, base: fixture.base };
}

/**
 * What the fixture answered, e.g. "2 HTTP requests: /api/v1/packages/tekton-task/
 * tekton-catalog-tasks/notify (the package and its version list), …/notify/0.2.1":
 * the list the constraint is matched against, then the one version fetched.
 */
export function hubTraffic(paths: readonly string[]): string {
  if (paths.length === 0) return "no requests";
  let shown: string | undefined;
  const parts = paths.map((p) => {
    const m = /^(\/api\/v1\/packages\/[^/]+\/[^/]+\/([^/?]+))(\/[^/?]+)?$/.exec(p);
    if (!m) return p;
    const [, pkg, name, version] = m;
    // the package's path once; after that, what follows its name
    const head = shown === pkg ? `…/${name}` : pkg;
    shown = pkg;
    return version === undefined ? `${head} (the package and its version list)` : `${head}${version}`;
  });
  return `${paths.length} HTTP request${paths.length > 1 ? "s" : ""}: ${parts.join(", ")}`;
}

/** The version a hub refSource names: its URI ends in /<version>. */
export function versionOf(uri: string | undefined): string | undefined {
  return uri?.split("/").at(-1);
}
