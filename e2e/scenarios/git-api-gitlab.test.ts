// API mode against the GitLab protocol fixture (GitLab's REST API v4 as published): the project
// by its URL-encoded path (a subgroup here), the operator's token in PRIVATE-TOKEN.
import assert from "node:assert/strict";
import { test } from "node:test";
import { useGitApiScenario } from "@quarry/harness/git-api-scenario";
import { GIT_LABELS } from "@quarry/harness/git-scenario";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\n";
let commit = "";
const api = useGitApiScenario("git-api-gitlab", {
  forge: "gitlab",
  setup: async ({ forge, operatorToken }) => {
    if (forge.kind !== "gitlab") throw new Error("expected gitlab");
    commit = forge.fixture.addRepo(
      "group/sub/catalog",
      { "task/hello.yaml": TASK },
      { token: operatorToken },
    );
  },
});

test("gitlab: data, refSource pinned to the commit, PRIVATE-TOKEN", async () => {
  const { scn, forge, serverUrl, operatorToken } = api();
  const params = { org: "group/sub", repo: "catalog", pathInRepo: "task/hello.yaml" };
  await createRequest(scn.admin, newRequest(scn.namespace, "gitlab", GIT_LABELS, params));
  const rr = await waitForRequest(scn, "gitlab", resolvedOk);
  assert.equal(dataOf(rr), TASK);
  assert.deepEqual(rr.status?.refSource, {
    uri: `git+${serverUrl}/group/sub/catalog.git`,
    digest: { sha1: commit },
    entryPoint: "task/hello.yaml",
  });
  if (forge.kind !== "gitlab") throw new Error("expected gitlab");
  const project = "/api/v4/projects/group%2Fsub%2Fcatalog";
  assert.deepEqual(
    forge.fixture.requests.map((r) => [r.path, r.privateToken]),
    [
      [`${project}/repository/commits/main`, operatorToken],
      [`${project}/repository/files/task%2Fhello.yaml?ref=${commit}`, operatorToken],
      [project, operatorToken],
    ],
  );
});
