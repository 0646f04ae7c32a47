// A new request is initialised to Succeeded=Unknown / ResolutionInProgress.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  createRequest,
  getRequest,
  newRequest,
  newScenario,
  type Scenario,
  succeeded,
} from "../harness/scenario.ts";
import { waitUntil } from "../harness/wait.ts";

let scn: Scenario;
before(async () => {
  scn = await newScenario("lc-init");
  await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

test("new request becomes Unknown/ResolutionInProgress with observedGeneration", async () => {
  await createRequest(scn.admin, newRequest(scn.namespace, "r1", { "resolution.tekton.dev/type": "git" }));
  const rr = await waitUntil("condition initialised", async () => {
    const r = await getRequest(scn.admin, scn.namespace, "r1");
    return succeeded(r) ? r : undefined;
  });
  const c = succeeded(rr)!;
  assert.equal(c.status, "Unknown");
  assert.equal(c.reason, "ResolutionInProgress");
  assert.equal(c.message, "waiting for resolver");
  assert.ok(c.lastTransitionTime);
  assert.equal(rr.status?.observedGeneration, rr.metadata.generation);
  assert.equal(rr.status?.data, undefined);
});
