// The conversion webhook stopped (the lifecycle controller gone): v1alpha1 reads and creates fail
// with the apiserver's "conversion webhook ... failed" reaching the client, nothing is stored, and
// v1beta1 clients (every Quarry service, Tekton) go on unaffected.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type ResolutionRequest, resolutionRequests } from "@quarry/api";
import {
  type ConversionCluster,
  newRequestV1Alpha1,
  resolutionRequestsV1Alpha1,
  startConversionCluster,
} from "@quarry/harness/conversion";
import { newRequest } from "@quarry/harness/scenario";
import { isApiError } from "@quarry/kube";

let cc: ConversionCluster;
before(async () => {
  cc = await startConversionCluster("conv-down");
});
after(() => cc?.stop());

const label = { "resolution.tekton.dev/type": "git" };
const webhookFailed = (err: unknown) =>
  isApiError(err) && /conversion webhook for resolution\.tekton\.dev\/.*failed/.test(err.message);

test("with the webhook stopped, v1alpha1 reads and creates get the apiserver's conversion error; nothing is stored", async () => {
  const { scn } = cc;
  await scn.admin.create(resolutionRequests, newRequest(scn.namespace, "before", label, { url: "x" }));
  // served while the controller runs
  await scn.admin.get(resolutionRequestsV1Alpha1, scn.namespace, "before");

  const controller = scn.services.find((s) => s.name === "lifecycle-controller");
  assert.ok(controller);
  const exit = await controller.stop();
  assert.equal(exit.code, 0);

  await assert.rejects(
    () => scn.admin.get(resolutionRequestsV1Alpha1, scn.namespace, "before"),
    webhookFailed,
  );
  // (a v1alpha1 list is not asserted: the apiserver may serve it from its watch cache, whose
  // objects were converted while the webhook was up)
  await assert.rejects(
    () =>
      scn.admin.create(
        resolutionRequestsV1Alpha1,
        newRequestV1Alpha1(scn.namespace, "during", label, { url: "y" }),
      ),
    webhookFailed,
  );

  const list = await scn.admin.list<ResolutionRequest>(resolutionRequests, scn.namespace);
  assert.deepEqual(
    list.items.map((r) => r.metadata.name),
    ["before"],
    "no half-converted object stored",
  );
  assert.deepEqual(list.items[0]?.spec.params, [{ name: "url", value: "x" }]);
  // v1beta1 writes need no conversion; reading the new object through v1alpha1 does
  await scn.admin.create(resolutionRequests, newRequest(scn.namespace, "beta-still-works", label));
  await assert.rejects(
    () => scn.admin.get(resolutionRequestsV1Alpha1, scn.namespace, "beta-still-works"),
    webhookFailed,
  );
});
