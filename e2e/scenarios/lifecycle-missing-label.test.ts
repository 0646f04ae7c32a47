// A request with no resolver label fails at once (controller-side check, for
// clusters where the admission policy is not installed or not applied).
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
  scn = await newScenario("lc-nolabel", { skipAdmissionPolicy: true });
  await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

test("no resolver label: ResolutionFailed naming the missing label", async () => {
  await createRequest(scn.admin, newRequest(scn.namespace, "unlabelled", { team: "a" }));
  const rr = await waitUntil("failed", async () => {
    const r = await getRequest(scn.admin, scn.namespace, "unlabelled");
    return succeeded(r)?.status === "False" ? r : undefined;
  });
  const c = succeeded(rr)!;
  assert.equal(c.reason, "ResolutionFailed");
  assert.match(c.message!, /resolution\.tekton\.dev\/type/);
  assert.match(c.message!, /resolution\.tekton\.dev\/resolver/);
});
