// Once a resolver sets status.data, the request becomes Succeeded=True.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resolutionRequests } from "@quarry/kube";
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
  scn = await newScenario("lc-done");
  await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

test("status.data written by a resolver marks the request Succeeded=True, data untouched", async () => {
  await createRequest(scn.admin, newRequest(scn.namespace, "r1", { "resolution.tekton.dev/type": "git" }));
  await waitUntil("initialised", async () => succeeded(await getRequest(scn.admin, scn.namespace, "r1")));
  const data = Buffer.from("apiVersion: tekton.dev/v1\nkind: Task\n").toString("base64");
  // the test plays the resolver
  await scn.admin.mergePatch(resolutionRequests, scn.namespace, "r1", { status: { data } }, "status");
  const rr = await waitUntil("succeeded", async () => {
    const r = await getRequest(scn.admin, scn.namespace, "r1");
    return succeeded(r)?.status === "True" ? r : undefined;
  });
  assert.equal(rr.status?.data, data);
  assert.equal(succeeded(rr)?.reason ?? "", "");
});
