// A request's own `token` Secret follows the credential binding: bound to nothing, it is refused
// Forbidden with the one message for every unusable Secret, before anything reaches the forge.
import assert from "node:assert/strict";
import { test } from "node:test";
import { useGitApiScenario } from "@quarry/harness/git-api-scenario";
import { createTokenSecret, GIT_LABELS } from "@quarry/harness/git-scenario";
import { createRequest, finished, newRequest, succeeded, waitForRequest } from "@quarry/harness/scenario";

const api = useGitApiScenario("git-api-unbound-token", {
  forge: "github",
  setup: async ({ scn, forge }) => {
    if (forge.kind !== "github") throw new Error("expected github");
    forge.fixture.addRepo("tektoncd/catalog", { "task/hello.yaml": "kind: Task\n" });
    await createTokenSecret(scn, "mine", { token: "e2e-own-unbound-token" });
  },
});

test("an unbound request token: Forbidden, nothing sent", async () => {
  const { scn, forge } = api();
  const params = { org: "tektoncd", repo: "catalog", token: "mine", pathInRepo: "task/hello.yaml" };
  await createRequest(scn.admin, newRequest(scn.namespace, "unbound", GIT_LABELS, params));
  const rr = await waitForRequest(scn, "unbound", finished);
  assert.equal(succeeded(rr)?.status, "False");
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "Forbidden");
  assert.match(
    succeeded(rr)?.message ?? "",
    /^param "token": Secret [-a-z0-9]+\/mine key "token" cannot be used as an API token for http:\/\/127\.0\.0\.1:\d+\/api\/v3: it is missing, empty or unreadable/,
  );
  if (forge.kind !== "github") throw new Error("expected github");
  assert.equal(forge.fixture.requests.length, 0);
});
