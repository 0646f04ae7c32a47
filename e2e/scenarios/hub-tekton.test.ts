// Type `tekton` against a Tekton Hub protocol fixture named by the
// Deployment's TEKTON_HUB_API (Tekton ships none): a full version is listed
// in go-version's form and fetched as Tekton Hub's major.minor.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hubOutcome, hubTask, useHubScenario } from "@quarry/harness/hub-scenario";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

const world = useHubScenario("hub-tekton", {
  env: ([hub]) => ({ TEKTON_HUB_API: `${hub?.base}/` }),
  setup: ([hub]) =>
    hub?.add({
      hub: "tekton",
      catalog: "Tekton",
      kind: "task",
      name: "golang-build",
      versions: ["0.1", "0.3", "0.4"].map((v) => ({ version: v, yaml: hubTask("golang-build", v) })),
    }),
});

test("type tekton: catalog Tekton by default, 0.3.0 fetched as 0.3 from /v1/resource/…/yaml", async () => {
  const { scn, hubs } = world();
  const rr = await hubOutcome(scn, "tekton", { type: "tekton", name: "golang-build", version: "0.3.0" });
  assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
  assert.equal(dataOf(rr), hubTask("golang-build", "0.3"));
  assert.equal(rr.status?.refSource?.uri, `${hubs[0]?.base}/v1/resource/Tekton/task/golang-build/0.3/yaml`);
  assert.deepEqual(hubs[0]?.requests, [
    "/v1/resource/Tekton/task/golang-build",
    "/v1/resource/Tekton/task/golang-build/0.3/yaml",
  ]);
});
