// Params left out are filled from hubresolver-config as Tekton fills them:
// default-type, default-kind and the Artifact Hub pipeline catalog.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hubOutcome, hubTask, useHubScenario } from "@quarry/harness/hub-scenario";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

const world = useHubScenario("hub-defaults", {
  config: ([hub]) => ({
    "default-type": "artifact",
    "default-kind": "pipeline",
    "default-artifact-hub-pipeline-catalog": "team-pipelines",
    "artifact-hub-urls": `- ${hub?.base}`,
  }),
  setup: ([hub]) =>
    hub?.add({
      hub: "artifact",
      catalog: "team-pipelines",
      kind: "pipeline",
      name: "buildpacks",
      versions: [{ version: "0.1.0", yaml: hubTask("buildpacks", "pipeline", "Pipeline") }],
    }),
});

test("name and version only: type, kind and catalog come from the config", async () => {
  const { scn, hubs } = world();
  const rr = await hubOutcome(scn, "defaults", { name: "buildpacks", version: "0.1" });
  assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
  assert.equal(dataOf(rr), hubTask("buildpacks", "pipeline", "Pipeline"));
  assert.equal(
    rr.status?.refSource?.uri,
    `${hubs[0]?.base}/api/v1/packages/tekton-pipeline/team-pipelines/buildpacks/0.1.0`,
  );
});
