import assert from "node:assert/strict";
import { test } from "node:test";
import { hubTraffic, versionOf } from "./hub.ts";

const pkg = "/api/v1/packages/tekton-task/tekton-catalog-tasks/notify";

test("the version list, then the version fetched, the package's path said once", () => {
  assert.equal(
    hubTraffic([pkg, `${pkg}/0.2.1`]),
    `2 HTTP requests: ${pkg} (the package and its version list), …/notify/0.2.1`,
  );
  assert.equal(hubTraffic([`${pkg}/0.2.1`]), `1 HTTP request: ${pkg}/0.2.1`);
  assert.equal(hubTraffic(["/v1/resource/Tekton/task/x"]), "1 HTTP request: /v1/resource/Tekton/task/x");
  assert.equal(hubTraffic([]), "no requests");
});

test("a hub refSource's version is its URI's last segment", () => {
  assert.equal(versionOf(`http://127.0.0.1:1${pkg}/0.2.1`), "0.2.1");
  assert.equal(versionOf(undefined), undefined);
});
