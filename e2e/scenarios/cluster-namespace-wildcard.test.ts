// "*" in blocked-namespaces, as Tekton reads it: every namespace is refused,
// the request's own too, unless allowed-namespaces lists it; the refusal
// carries Tekton's message.
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
let other = "";
const scenario = useScenario("cluster-wild", {
  start: ["lifecycle-controller", "cluster-resolver"],
  setup: async (scn) => {
    shared = await scn.extraNamespace("shared");
    other = await scn.extraNamespace("other");
    for (const ns of [scn.namespace, shared, other]) await applyObject(scn.admin, taskManifest(ns, "common"));
    await setConfig(scn, "cluster-resolver-config", {
      "blocked-namespaces": "*, kube-system",
      "allowed-namespaces": ` ${shared} `,
    });
    await new Promise((r) => setTimeout(r, 1000)); // config arrives through a watch
  },
});

async function outcome(name: string, namespace?: string) {
  const scn = scenario();
  const params: Record<string, string> = namespace ? { name: "common", namespace } : { name: "common" };
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, name, { "resolution.tekton.dev/type": "cluster" }, params),
  );
  const rr = await waitForRequest(scn, name, finished);
  return { condition: succeeded(rr)!, reason: rr.status?.annotations?.["quarry.dev/reason"] };
}

test('blocked "*": only the namespaces allowed-namespaces lists are read', async () => {
  const scn = scenario();
  const refusal = (name: string) =>
    `invalid resource request "${scn.namespace}/${name}": only explicit allowed access to namespaces is allowed`;
  const [allowed, elsewhere, own] = await Promise.all([
    outcome("allowed", shared),
    outcome("elsewhere", other),
    outcome("own"),
  ]);
  assert.equal(allowed.condition.status, "True");
  for (const [name, o] of [
    ["elsewhere", elsewhere],
    ["own", own],
  ] as const) {
    assert.equal(o.condition.status, "False", name);
    assert.equal(o.reason, "Forbidden", name);
    assert.equal(o.condition.message, refusal(name), name);
  }
});
