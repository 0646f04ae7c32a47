import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "@quarry/kube";
import { describeError, explainUnserved, isUnserved, serverMessage } from "./errors.ts";

test("API errors read like kubectl's, without the request line", () => {
  const err = new ApiError(
    404,
    "NotFound",
    'GET /apis/resolution.tekton.dev/v1beta1/namespaces/x/resolutionrequests/y: HTTP 404: resolutionrequests.resolution.tekton.dev "y" not found',
  );
  assert.equal(serverMessage(err), 'resolutionrequests.resolution.tekton.dev "y" not found');
  assert.equal(
    describeError(err),
    'Error from server (NotFound): resolutionrequests.resolution.tekton.dev "y" not found',
  );
});

test("other errors keep their message", () => {
  assert.equal(describeError(new Error("connect ECONNREFUSED")), "error: connect ECONNREFUSED");
  assert.equal(serverMessage("plain"), "plain");
});

test("a 404 without a NotFound status means the CRD is not installed", () => {
  const unserved = explainUnserved(new ApiError(404, undefined, "GET /apis/x: HTTP 404: 404 page not found"));
  assert.match(String(unserved), /does not serve resolutionrequests\.resolution\.tekton\.dev/);
  const missing = new ApiError(404, "NotFound", 'GET /x: HTTP 404: "y" not found');
  assert.equal(explainUnserved(missing), missing);
});

test("an unserved resource other than Quarry's is named with its own hint", () => {
  const unserved = explainUnserved(new ApiError(404, undefined, "404 page not found"), {
    what: "customruns.tekton.dev",
    hint: "is Tekton Pipelines installed?",
  });
  assert.equal(
    String(unserved),
    "Error: this cluster does not serve customruns.tekton.dev: is Tekton Pipelines installed?",
  );
  assert.equal(isUnserved(new ApiError(404, "NotFound", "x")), false);
});
