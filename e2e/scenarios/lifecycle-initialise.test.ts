// A new request is initialised to Succeeded=Unknown / ResolutionInProgress.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createRequest,
  initialised,
  newRequest,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

const scenario = useScenario("lc-init", { start: ["lifecycle-controller"] });

test("new request becomes Unknown/ResolutionInProgress with observedGeneration", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "r1", { "resolution.tekton.dev/type": "git" }));
  const rr = await waitForRequest(scn, "r1", initialised);
  const c = succeeded(rr)!;
  assert.equal(c.status, "Unknown");
  assert.equal(c.reason, "ResolutionInProgress");
  assert.equal(c.message, "waiting for resolver");
  assert.ok(c.lastTransitionTime);
  assert.equal(rr.status?.observedGeneration, rr.metadata.generation);
  assert.equal(rr.status?.data, undefined);
});
