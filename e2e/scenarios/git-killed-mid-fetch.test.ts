// The git resolver is SIGKILLed while its `git fetch` is running; started
// again on the same cache directory, it still completes the request.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import { childProcesses } from "@quarry/harness/procs";
import { createRequest, dataOf, newRequest, resolvedOk, waitForRequest } from "@quarry/harness/scenario";

const git = useGitScenario("git-killed");

test("killed mid-fetch, restarted: the request completes", { timeout: 90_000 }, async () => {
  const g = git();
  const { scn, server, url, resolver, cacheDir } = g;
  server.setLatency(2500);
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "interrupted", GIT_LABELS, { url, revision: "main", pathInRepo: "task.yaml" }),
  );
  const fetch = await waitUntil(
    "git fetch running under the resolver",
    () => childProcesses(resolver.pid).find((p) => /\bfetch\b/.test(p.cmdline)),
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  resolver.kill("SIGKILL");
  assert.equal((await resolver.exited).signal, "SIGKILL");
  server.setLatency(0);
  // the orphaned git may still hold locks in the cache; the new process must cope
  await scn.start("git-resolver", { QUARRY_GIT_CACHE_DIR: cacheDir });
  const rr = await waitForRequest(scn, "interrupted", resolvedOk, 60_000);
  assert.match(dataOf(rr), /kind: Task/);
  assert.ok(fetch.pid > 0);
});
