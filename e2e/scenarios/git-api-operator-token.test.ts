// The operator's API token goes only to the configured server-url (Tekton's CVE-2026-40161): a
// request that names another serverURL and brings no token of its own is refused Forbidden, and
// that server sees no request at all, let alone an Authorization header.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type ForgeFixture, startForgeFixture } from "@quarry/devcluster/forge-fixtures";
import { useGitApiScenario } from "@quarry/harness/git-api-scenario";
import { GIT_LABELS } from "@quarry/harness/git-scenario";
import { createRequest, finished, newRequest, succeeded, waitForRequest } from "@quarry/harness/scenario";

let elsewhere: ForgeFixture;
before(async () => {
  elsewhere = await startForgeFixture("github");
  elsewhere.addRepo("tektoncd/catalog", { "task/hello.yaml": "kind: Task\n" });
});
after(() => elsewhere.stop());

const api = useGitApiScenario("git-api-operator-token", { forge: "github" });

test("a request-named serverURL never gets the operator's token", async () => {
  const { scn } = api();
  const params = {
    org: "tektoncd",
    repo: "catalog",
    serverURL: elsewhere.baseUrl,
    pathInRepo: "task/hello.yaml",
  };
  await createRequest(scn.admin, newRequest(scn.namespace, "elsewhere", GIT_LABELS, params));
  const rr = await waitForRequest(scn, "elsewhere", finished);
  assert.equal(succeeded(rr)?.status, "False");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "Forbidden");
  assert.match(
    succeeded(rr)?.message ?? "",
    /^param "serverURL": .* is not the server-url in git-resolver-config/,
  );
  assert.deepEqual(
    elsewhere.requests.filter((r) => r.authorization !== undefined || r.privateToken !== undefined),
    [],
  );
  assert.equal(elsewhere.requests.length, 0);
});
