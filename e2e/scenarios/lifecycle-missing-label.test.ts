// A request with no resolver label fails at once (controller-side check, for
// clusters where the admission policy is not installed or not applied).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createRequest,
  finished,
  newRequest,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

const scenario = useScenario("lc-nolabel", { skipAdmissionPolicy: true, start: ["lifecycle-controller"] });

test("no resolver label: ResolutionFailed naming the missing label", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "unlabelled", { team: "a" }));
  const c = succeeded(await waitForRequest(scn, "unlabelled", finished))!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "ResolutionFailed");
  assert.match(c.message!, /resolution\.tekton\.dev\/type/);
  assert.match(c.message!, /resolution\.tekton\.dev\/resolver/);
});
