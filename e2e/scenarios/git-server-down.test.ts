// An unreachable git server is a transient failure: the runtime retries,
// so a server that comes back in time still serves the request; one that
// stays down ends in SourceUnavailable.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { TASK_V2 } from "@quarry/devcluster/git-repos";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const git = useGitScenario("git-down", { config: { "max-attempts": "3" } });

test("down, then up again within the retries: resolved", async () => {
  const { scn, server, url } = git();
  await server.down();
  try {
    await createRequest(
      scn.admin,
      newRequest(scn.namespace, "comes-back", GIT_LABELS, { url, pathInRepo: "task.yaml" }),
    );
    await sleep(700);
  } finally {
    await server.up();
  }
  const rr = await waitForRequest(scn, "comes-back", resolvedOk);
  assert.equal(dataOf(rr), TASK_V2);
});

test("down for good: SourceUnavailable after the runtime's attempts", async () => {
  const { scn, server, url } = git();
  await server.down();
  try {
    await createRequest(
      scn.admin,
      newRequest(scn.namespace, "stays-down", GIT_LABELS, { url, pathInRepo: "task.yaml" }),
    );
    const rr = await waitForRequest(scn, "stays-down", finished);
    assert.equal(succeeded(rr)?.status, "False");
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
    assert.match(succeeded(rr)?.message ?? "", /gave up after 3 attempts/);
  } finally {
    await server.up();
  }
});
