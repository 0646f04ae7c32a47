// API mode against a real Gitea (built from the Go module proxy, SQLite): a branch is resolved to
// its commit first and the file read at that commit, so refSource pins the commit; a full commit
// id reads the file as it was then. The operator's token goes as `Authorization: token`.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { GiteaRepo } from "@quarry/devcluster/gitea";
import { useGitApiScenario } from "@quarry/harness/git-api-scenario";
import { GIT_LABELS } from "@quarry/harness/git-scenario";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const V1 = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\n";
const V2 = `${V1}spec:\n  description: v2\n`;
let repo: GiteaRepo | undefined;
let first = "";
let second = "";

const api = useGitApiScenario("git-api-gitea", {
  forge: "gitea",
  setup: async ({ forge }) => {
    if (forge.kind !== "gitea") throw new Error("expected gitea");
    // private: only the operator's token can read it
    repo = await forge.gitea.createRepo("tasks", { private: true });
    first = (
      await forge.gitea.writeFile(repo, "task/hello.yaml", V1, { branch: "feature", fromBranch: "main" })
    ).commit;
    second = (await forge.gitea.writeFile(repo, "task/hello.yaml", V2, { branch: "feature" })).commit;
  },
});

async function resolve(name: string, revision: string) {
  const { scn } = api();
  const params = { org: repo!.owner, repo: repo!.name, revision, pathInRepo: "task/hello.yaml" };
  await createRequest(scn.admin, newRequest(scn.namespace, name, GIT_LABELS, params));
  return waitForRequest(scn, name, resolvedOk);
}

test("a branch: resolved to its commit first, refSource pins it", async () => {
  const rr = await resolve("by-branch", "feature");
  assert.equal(dataOf(rr), V2);
  assert.deepEqual(rr.status?.refSource, {
    uri: `git+${repo!.cloneUrl}`,
    digest: { sha1: second },
    entryPoint: "task/hello.yaml",
  });
  const a = rr.status?.annotations ?? {};
  assert.equal(a["resolution.tekton.dev/revision"], second);
  assert.equal(a["resolution.tekton.dev/url"], repo!.cloneUrl);
  assert.equal(a["resolution.tekton.dev/org"], repo!.owner);
  assert.equal(a["resolution.tekton.dev/repo"], "tasks");
});

test("a full commit id: the file as it was at that commit", async () => {
  const rr = await resolve("by-sha", first);
  assert.equal(dataOf(rr), V1);
  assert.equal(rr.status?.refSource?.digest.sha1, first);
});
