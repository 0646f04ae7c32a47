// artifact-hub-urls is tried in order, first success wins (Tekton v1.15):
// a hub that is down, or that lacks the package, hands over to the next, and
// the hub that listed the version serves it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hubOutcome, hubTask, useHubScenario } from "@quarry/harness/hub-scenario";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

// hubs[0] is down (503), hubs[1] has no such package (404), hubs[2] has it
const world = useHubScenario("hub-fallback", {
  addresses: ["127.0.0.1", "127.0.0.2", "127.0.0.3"],
  config: (hubs) => ({ "artifact-hub-urls": hubs.map((h) => `- ${h.base}`).join("\n") }),
  setup: (hubs) => {
    const [down, , third] = hubs;
    if (down) down.unavailable = true;
    third?.add({
      hub: "artifact",
      catalog: "tekton-catalog-tasks",
      kind: "task",
      name: "lint",
      versions: [{ version: "1.0.0", yaml: hubTask("lint", "third") }],
    });
  },
});

test("the first hub down and the second 404: the third serves, and only it is asked for the YAML", async () => {
  const { scn, hubs } = world();
  const rr = await hubOutcome(scn, "fallback", { name: "lint", version: "1.0" });
  assert.ok(resolvedOk(rr), JSON.stringify(succeeded(rr)));
  assert.equal(dataOf(rr), hubTask("lint", "third"));
  assert.match(
    rr.status?.refSource?.uri ?? "",
    /^http:\/\/127\.0\.0\.3:\d+\/api\/v1\/packages\/tekton-task\//,
  );
  const list = "/api/v1/packages/tekton-task/tekton-catalog-tasks/lint";
  assert.deepEqual(hubs[0]?.requests, [list]);
  assert.deepEqual(hubs[1]?.requests, [list]);
  assert.deepEqual(hubs[2]?.requests, [list, `${list}/1.0.0`]);
});
