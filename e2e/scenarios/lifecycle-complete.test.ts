// Once a resolver sets status.data, the request becomes Succeeded=True.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";

import {
  createRequest,
  initialised,
  newRequest,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

const scenario = useScenario("lc-done", { start: ["lifecycle-controller"] });

test("status.data written by a resolver marks the request Succeeded=True, data untouched", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "r1", { "resolution.tekton.dev/type": "git" }));
  await waitForRequest(scn, "r1", initialised);
  const data = Buffer.from("apiVersion: tekton.dev/v1\nkind: Task\n").toString("base64");
  // the test plays the resolver
  await scn.admin.mergePatch(resolutionRequests, scn.namespace, "r1", { status: { data } }, "status");
  const rr = await waitForRequest(scn, "r1", (r) => succeeded(r)?.status === "True");
  assert.equal(rr.status?.data, data);
  assert.equal(succeeded(rr)?.reason ?? "", "");
});
