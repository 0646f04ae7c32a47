// The git resolver serves files from a real smart-HTTP git server: branches,
// tags, full refs and commit ids, nested paths and in-repository symlinks,
// with Tekton's annotations and refSource; a file read once is served again
// without fetching from the server.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BUILD_TASK, PIPELINE, TASK_V1, TASK_V2 } from "@quarry/devcluster/git-repos";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const git = useGitScenario("git");

async function resolve(name: string, params: Record<string, string>) {
  const { scn } = git();
  await createRequest(scn.admin, newRequest(scn.namespace, name, GIT_LABELS, params));
  return waitForRequest(scn, name, resolvedOk);
}

test("a branch: data, annotations and refSource", async () => {
  const { url, repo } = git();
  const rr = await resolve("branch", { url, revision: "main", pathInRepo: "task.yaml" });
  assert.equal(dataOf(rr), TASK_V2);
  const a = rr.status?.annotations ?? {};
  assert.equal(a["resolution.tekton.dev/url"], url);
  assert.equal(a["resolution.tekton.dev/revision"], repo.main);
  assert.equal(a["resolution.tekton.dev/path"], "task.yaml");
  assert.equal(a["resolution.tekton.dev/content-type"], "application/x-yaml");
  assert.deepEqual(rr.status?.refSource, {
    uri: `git+${url}`,
    digest: { sha1: repo.main },
    entryPoint: "task.yaml",
  });
  assert.deepEqual(rr.status?.source, rr.status?.refSource);
});

test("tags (lightweight, annotated, refs/tags/...), a commit id, nested paths, a symlink", async () => {
  const { url, repo } = git();
  const cases: [string, Record<string, string>, string, string][] = [
    ["tag-light", { revision: "v1", pathInRepo: "task.yaml" }, TASK_V1, repo.first],
    ["tag-annotated", { revision: "v2", pathInRepo: "task.yaml" }, TASK_V2, repo.main],
    ["tag-full", { revision: "refs/tags/v1", pathInRepo: "task.yaml" }, TASK_V1, repo.first],
    ["commit", { revision: repo.first, pathInRepo: "/tasks/build/task.yaml" }, BUILD_TASK, repo.first],
    ["nested", { revision: "release/1.0", pathInRepo: "pipelines/ci/pipeline.yaml" }, PIPELINE, repo.first],
    ["symlink", { revision: "main", pathInRepo: "links/inside.yaml" }, BUILD_TASK, repo.main],
  ];
  await Promise.all(
    cases.map(async ([name, params, data, commit]) => {
      const rr = await resolve(name, { url, ...params });
      assert.equal(dataOf(rr), data, name);
      assert.equal(rr.status?.annotations?.["resolution.tekton.dev/revision"], commit, name);
    }),
  );
});

test("a file read before is served again without a fetch from the git server", async () => {
  const { url, server, repo } = git();
  await resolve("warm", { url, revision: "feature", pathInRepo: "task.yaml" });
  const fetches = server.fetches(repo.name).length;
  const logged = server.log.length;
  const rr = await resolve("hot", { url, revision: "feature", pathInRepo: "task.yaml", cache: "never" });
  assert.match(dataOf(rr), /echo feature/);
  const since = server.log.slice(logged);
  assert.equal(server.fetches(repo.name).length, fetches, `no fetch; requests: ${JSON.stringify(since)}`);
  assert.ok(
    since.every((e) => e.command === undefined || e.command === "ls-refs"),
    "only ref discovery",
  );
});

test("a pinned commit read before does not touch the git server at all", async () => {
  const { url, server, repo } = git();
  await resolve("pinned-1", { url, revision: repo.feature, pathInRepo: "task.yaml", cache: "never" });
  const logged = server.log.length;
  await resolve("pinned-2", { url, revision: repo.feature, pathInRepo: "task.yaml", cache: "never" });
  assert.deepEqual(server.log.slice(logged), []);
});

test("/healthz and /metrics answer, with the git engine's metrics", async () => {
  const { resolver } = git();
  assert.equal((await resolver.ops("/healthz")).status, 200);
  const metrics = (await resolver.ops("/metrics")).body;
  assert.match(metrics, /quarry_git_cache_bytes \d+/);
  assert.match(metrics, /quarry_git_operations_total\{operation="fetch"\} \d+/);
});
