// With neither namespace key set a request reads only its own namespace;
// allowed-namespaces (reloaded live) widens that, a blocked entry wins.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import {
  createRequest,
  finished,
  newRequest,
  setConfig,
  succeeded,
  taskManifest,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

let shared = "";
const scenario = useScenario("cluster-pol", {
  start: ["lifecycle-controller", "cluster-resolver"],
  setup: async (scn) => {
    shared = await scn.extraNamespace("shared");
    await applyObject(scn.admin, taskManifest(shared, "common"));
  },
});
const cluster = { "resolution.tekton.dev/type": "cluster" };

async function outcome(name: string) {
  const scn = scenario();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, cluster, { name: "common", namespace: shared }),
  );
  const rr = await waitForRequest(scn, name, finished);
  return { condition: succeeded(rr)!, reason: rr.status?.annotations?.["quarry.dev/reason"] };
}

test("another namespace is forbidden by default, naming both namespaces", async () => {
  const { condition, reason } = await outcome("default-policy");
  assert.equal(condition.status, "False");
  assert.equal(reason, "Forbidden");
  assert.match(
    condition.message ?? "",
    new RegExp(
      `access to specified namespace ${shared} is not allowed: .* reads only its own namespace \\(${scenario().namespace}\\)`,
    ),
  );
});

test("allowed-namespaces admits it, live", async () => {
  await setConfig(scenario(), "cluster-resolver-config", { "allowed-namespaces": `other, ${shared}` });
  await new Promise((r) => setTimeout(r, 1000)); // config arrives through a watch
  const { condition } = await outcome("allowed");
  assert.equal(condition.status, "True");
});

test("blocked-namespaces wins over allowed *", async () => {
  await setConfig(scenario(), "cluster-resolver-config", {
    "allowed-namespaces": "*",
    "blocked-namespaces": shared,
  });
  await new Promise((r) => setTimeout(r, 1000));
  const { condition, reason } = await outcome("blocked");
  assert.equal(condition.status, "False");
  assert.equal(reason, "Forbidden");
});
