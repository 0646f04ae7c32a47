// Git work runs in child processes, so the resolver's event loop stays free:
// /healthz answers promptly while many commits of a large repository are
// fetched and read at once, and each commit is fetched once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { git as gitCli, RepoBuilder } from "@quarry/devcluster/git-repos";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const COMMITS = 12;
let commits: string[] = [];
const git = useGitScenario("git-load", {
  setup: async ({ server }) => {
    const big = await RepoBuilder.create(server.root, "large.git");
    // a 32 MB tree of 2000 files, COMMITS commits deep, each with its own Task
    await big.addHistory({
      commits: COMMITS,
      files: 2000,
      fileBytes: 16 * 1024,
      filesPerCommit: 20,
      taskPath: "task.yaml",
    });
    await big.push();
    big.dispose();
    commits = (await gitCli(["--git-dir", `${server.root}/large.git`, "rev-list", "main"])).split("\n");
  },
});

test("concurrent resolutions of every commit; /healthz stays responsive", async () => {
  const { scn, server, resolver } = git();
  const url = server.url("large.git");
  const latencies: number[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const t0 = performance.now();
      const res = await resolver.ops("/healthz");
      latencies.push(performance.now() - t0);
      assert.equal(res.status, 200);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    await Promise.all(
      commits.map(async (commit, i) => {
        const name = `load-${i}`;
        await createRequest(
          scn.admin,
          newRequest(scn.namespace, name, GIT_LABELS, { url, revision: commit, pathInRepo: "task.yaml" }),
        );
        const rr = await waitForRequest(scn, name, resolvedOk, 60_000);
        assert.match(dataOf(rr), /name: history-\d+/);
      }),
    );
  } finally {
    polling = false;
    await poller;
  }
  latencies.sort((a, b) => a - b);
  const max = latencies.at(-1) ?? 0;
  const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
  console.log(
    `/healthz during load: ${latencies.length} probes, p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
  );
  assert.ok(max < 1000, `/healthz max ${max} ms`);
  // one fetch of trees per commit (the server log cannot tell: a fetch may take several POSTs to negotiate)
  const metrics = (await resolver.ops("/metrics")).body;
  assert.match(metrics, new RegExp(`quarry_git_operations_total\\{operation="fetch"\\} ${COMMITS}\\b`));
});
