// waitFor returns the failed outcome with Tekton's reason, Quarry's finer
// reason and the message naming what is at fault.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { useScenario } from "@quarry/harness/scenario";
import { requestResolution, waitFor } from "@quarry/requester";

const scenario = useScenario("rq-failed");

test("waitFor: Succeeded=False → failed with reason, quarryReason, message", async () => {
  const scn = scenario();
  const rr = await requestResolution(scn.admin, {
    namespace: scn.namespace,
    resolverType: "git",
    params: [{ name: "pathInRepo", value: "missing.yaml" }],
    baseName: "run-1",
  });
  const name = rr.metadata.name!;
  const waiting = waitFor(scn.admin, scn.namespace, name, { timeoutMs: 20_000 });
  await new Promise((r) => setTimeout(r, 200)); // let the watch start, so the change arrives as an event
  const message = 'pathInRepo "missing.yaml" not found at revision main';
  await scn.admin.mergePatch(
    resolutionRequests,
    scn.namespace,
    name,
    {
      status: {
        annotations: { "quarry.dev/reason": "NotFound" },
        conditions: [{ type: "Succeeded", status: "False", reason: "ResolutionFailed", message }],
      },
    },
    "status",
  );
  assert.deepEqual(await waiting, {
    state: "failed",
    reason: "ResolutionFailed",
    quarryReason: "NotFound",
    message,
  });
  // an already finished request answers at once, from the initial read
  assert.equal((await waitFor(scn.admin, scn.namespace, name, { timeoutMs: 5_000 })).state, "failed");
});
