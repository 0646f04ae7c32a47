// Tekton's backoff keys in git-resolver-config space a request's attempts: a
// git server answering 503 three times, then serving, is tried at 0 s, 1 s,
// 3 s and 7 s (backoff-duration 1s, factor 2, no jitter), not at the SDK's own
// 0.5 s, 1 s, 2 s; and backoff-steps caps the attempts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { TASK_V2 } from "@quarry/devcluster/git-repos";
import type { AccessEntry } from "@quarry/devcluster/git-server";
import { assertScheduleGaps, BACKOFF_SCHEDULE } from "@quarry/harness/backoff";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import {
  createRequest,
  dataOf,
  finished,
  newRequest,
  resolvedOk,
  setConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const git = useGitScenario("git-backoff", { config: { ...BACKOFF_SCHEDULE, "backoff-steps": "4" } });

/**
 * When each attempt reached the server. An attempt may send several requests (ref discovery in
 * process, then git's own when that is refused), one right after the other; attempts are at least
 * a second apart here, so a gap over 500 ms starts the next one.
 */
function attemptStarts(entries: readonly AccessEntry[]): number[] {
  const starts: number[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const { at } of entries) {
    if (at - last > 500) starts.push(at);
    last = at;
  }
  return starts;
}

test("three refused attempts spaced 1 s, 2 s, 4 s apart, then the fourth resolves", async () => {
  const { scn, server, url } = git();
  const from = server.log.length;
  const refused = () => server.log.slice(from).filter((e) => e.status === 503);
  server.setFailure(503);
  try {
    await createRequest(
      scn.admin,
      newRequest(scn.namespace, "flaky", GIT_LABELS, { url, pathInRepo: "task.yaml" }),
    );
    // let three attempts be refused (each one's requests come at once), then serve the fourth
    while (attemptStarts(refused()).length < 3) await sleep(20);
    await sleep(300);
  } finally {
    server.setFailure(undefined);
  }
  const rr = await waitForRequest(scn, "flaky", resolvedOk, 30_000);
  assert.equal(dataOf(rr), TASK_V2);
  const log = server.log.slice(from);
  assert.equal(attemptStarts(refused()).length, 3, `refused: ${JSON.stringify(refused())}`);
  const at = attemptStarts(log);
  assert.equal(at.length, 4, `requests: ${JSON.stringify(log)}`);
  assertScheduleGaps(at);
});

test("backoff-steps is the number of attempts: two, then SourceUnavailable", async () => {
  const { scn, server, url } = git();
  await setConfig(scn, "git-resolver-config", { ...BACKOFF_SCHEDULE, "backoff-steps": "2" });
  // the config is live: give the resolver's watch a moment to see the change
  await sleep(1_000);
  const from = server.log.length;
  server.setFailure(503);
  try {
    await createRequest(
      scn.admin,
      newRequest(scn.namespace, "down", GIT_LABELS, { url, pathInRepo: "task.yaml" }),
    );
    const rr = await waitForRequest(scn, "down", finished, 30_000);
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
    assert.match(succeeded(rr)?.message ?? "", /gave up after 2 attempts/);
    const refused = server.log.slice(from).filter((e) => e.status === 503);
    assert.equal(attemptStarts(refused).length, 2, `refused: ${JSON.stringify(refused)}`);
  } finally {
    server.setFailure(undefined);
  }
});
