// API mode against the GitHub protocol fixture (GitHub's REST API as published, Enterprise
// layout under /api/v3): commit of the branch first, the file at that commit, the clone URL for
// refSource; the operator's token as a Bearer token on each call.
import assert from "node:assert/strict";
import { test } from "node:test";
import { useGitApiScenario } from "@quarry/harness/git-api-scenario";
import { GIT_LABELS } from "@quarry/harness/git-scenario";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\n";
let commit = "";
const api = useGitApiScenario("git-api-github", {
  forge: "github",
  setup: async ({ forge, operatorToken }) => {
    if (forge.kind !== "github") throw new Error("expected github");
    commit = forge.fixture.addRepo("tektoncd/catalog", { "task/hello.yaml": TASK }, { token: operatorToken });
  },
});

test("github: data, Tekton's annotations, refSource pinned to the commit, Bearer token", async () => {
  const { scn, forge, serverUrl, operatorToken } = api();
  const params = { org: "tektoncd", repo: "catalog", revision: "main", pathInRepo: "task/hello.yaml" };
  await createRequest(scn.admin, newRequest(scn.namespace, "github", GIT_LABELS, params));
  const rr = await waitForRequest(scn, "github", resolvedOk);
  assert.equal(dataOf(rr), TASK);
  assert.deepEqual(rr.status?.refSource, {
    uri: `git+${serverUrl}/tektoncd/catalog.git`,
    digest: { sha1: commit },
    entryPoint: "task/hello.yaml",
  });
  if (forge.kind !== "github") throw new Error("expected github");
  assert.deepEqual(
    forge.fixture.requests.map((r) => [r.path, r.authorization]),
    [
      ["/api/v3/repos/tektoncd/catalog/commits/main", `Bearer ${operatorToken}`],
      [`/api/v3/repos/tektoncd/catalog/contents/task/hello.yaml?ref=${commit}`, `Bearer ${operatorToken}`],
      ["/api/v3/repos/tektoncd/catalog", `Bearer ${operatorToken}`],
    ],
  );
});
