// The hub resolver against an Artifact Hub protocol fixture: an exact
// version (`0.2`, fetched as Artifact Hub's `0.2.0`) and a go-version
// constraint (the highest release matching, pre-releases skipped), each
// listing the versions first and fetching from the same hub, with Tekton's
// refSource (the API URL, the sha256 of the content).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { hubOutcome, hubTask, useHubScenario } from "@quarry/harness/hub-scenario";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

const versions = ["0.1.0", "0.2.0", "0.2.1", "0.3.0-rc.1", "0.3.0"];
const world = useHubScenario("hub-artifact", {
  config: ([hub]) => ({ "artifact-hub-urls": `- ${hub?.base}/` }),
  setup: ([hub]) =>
    hub?.add({
      hub: "artifact",
      catalog: "tekton-catalog-tasks",
      kind: "task",
      name: "git-clone",
      versions: versions.map((v) => ({
        version: v,
        prerelease: v.includes("-"),
        yaml: hubTask("git-clone", v),
      })),
    }),
});

test("an exact version: listed, then fetched as Artifact Hub spells it", async () => {
  const { scn, hubs } = world();
  const hub = hubs[0];
  const rr = await hubOutcome(scn, "exact", { name: "git-clone", version: "0.2" });
  assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
  assert.equal(dataOf(rr), hubTask("git-clone", "0.2.0"));
  const uri = `${hub?.base}/api/v1/packages/tekton-task/tekton-catalog-tasks/git-clone/0.2.0`;
  assert.deepEqual(rr.status?.refSource, {
    uri,
    digest: { sha256: createHash("sha256").update(hubTask("git-clone", "0.2.0")).digest("hex") },
  });
  assert.deepEqual(hub?.requests.slice(-2), [
    "/api/v1/packages/tekton-task/tekton-catalog-tasks/git-clone",
    "/api/v1/packages/tekton-task/tekton-catalog-tasks/git-clone/0.2.0",
  ]);
});

test("a constraint: the highest release that matches; a pre-release never", async () => {
  const { scn } = world();
  const below = await hubOutcome(scn, "range", { name: "git-clone", version: ">= 0.1, < 0.3" });
  assert.ok(resolvedOk(below), JSON.stringify(succeeded(below)));
  assert.equal(dataOf(below), hubTask("git-clone", "0.2.1"));
  const pessimistic = await hubOutcome(scn, "pessimistic", { name: "git-clone", version: "~> 0.2" });
  assert.equal(dataOf(pessimistic), hubTask("git-clone", "0.3.0"));
});
