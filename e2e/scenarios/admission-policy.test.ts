// The ValidatingAdmissionPolicy shipped with the CRDs rejects a request with
// no resolver label before any controller sees it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import { createRequest, newRequest, useScenario } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";

const scenario = useScenario("admission");

test("creating a request without a resolver label is denied at admission", async () => {
  const scn = scenario();
  // policies take a moment to be loaded by the apiserver after install
  const err = await waitUntil("policy enforced", async () => {
    try {
      await createRequest(scn.admin, newRequest(scn.namespace, `probe-${Date.now()}`, {}));
      return undefined;
    } catch (e) {
      return e;
    }
  });
  assert.ok(isApiError(err), String(err));
  assert.ok([400, 403, 422].includes(err.status), `status ${err.status}`);
  assert.match(err.message, /resolution\.tekton\.dev\/type/);
});

test("a labelled request is admitted", async () => {
  const scn = scenario();
  const rr = await createRequest(
    scn.admin,
    newRequest(scn.namespace, "ok", { "resolution.tekton.dev/type": "git" }),
  );
  assert.equal(rr.metadata.name, "ok");
});
