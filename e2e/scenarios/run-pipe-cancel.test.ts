// quarry-e2e: needs-node
//
// A Pipe run cancelled (as a PipelineRun cancels it) or timed out while its
// pod runs: the run ends with Tekton's reason, and its ResolutionRequest is
// deleted, taking the pipe pod with it; nothing is stored.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import { type Pod, pods } from "@quarry/harness/node";
import { pipeRequestsOf, pipeRun, podsOf, SLOW_PIPE, usePipeRunScenario } from "@quarry/harness/pipe-runs";
import { isGone } from "@quarry/harness/pipe-scenario";
import { cancelRun, createRun, runSucceeded, waitForRun } from "@quarry/harness/runs";
import type { Scenario } from "@quarry/harness/scenario";

const scenario = usePipeRunScenario("run-pipe-cancel");

/** Waits until the run's pipe pod runs its never-ending init container; the request's and pod's names. */
async function podRunning(scn: Scenario, run: string): Promise<{ request: string; pod: string }> {
  return waitUntil(
    `${run}'s pipe pod running`,
    async () => {
      const [rr] = await pipeRequestsOf(scn, run);
      if (!rr) return undefined;
      const [pod] = (await podsOf(scn, rr)) as Pod[];
      const running = pod?.status?.initContainerStatuses?.[0]?.state?.running !== undefined;
      return pod && running ? { request: rr.metadata.name!, pod: pod.metadata.name! } : undefined;
    },
    { timeoutMs: 90_000 },
  );
}

async function requestAndPodGone(scn: Scenario, request: string, pod: string): Promise<void> {
  await waitUntil(
    `request ${request} and pod ${pod} deleted`,
    async () =>
      ((await isGone(scn, resolutionRequests, scn.namespace, request)) &&
        (await isGone(scn, pods, scn.namespace, pod))) ||
      undefined,
    { timeoutMs: 60_000 },
  );
}

test("cancelled while its pod runs: CustomRunCancelled, its request and pod deleted", async () => {
  const { scn } = scenario();
  await createRun(scn.admin, pipeRun("CustomRun", scn, "cancel-me", SLOW_PIPE));
  const { request, pod } = await podRunning(scn, "cancel-me");
  await cancelRun(scn.admin, "CustomRun", scn.namespace, "cancel-me");
  const run = await waitForRun(scn, "CustomRun", "cancel-me", undefined, 30_000);
  const c = runSucceeded(run)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "CustomRunCancelled");
  assert.equal(c.message, "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.");
  assert.equal(run.status?.results, undefined, "nothing stored, nothing named");
  await requestAndPodGone(scn, request, pod);
});

test("timed out while its pod runs: RunTimedOut, its request and pod deleted", async () => {
  const { scn } = scenario();
  await createRun(scn.admin, pipeRun("Run", scn, "too-slow", SLOW_PIPE, { timeout: "20s" }));
  const { request, pod } = await podRunning(scn, "too-slow");
  const run = await waitForRun(scn, "Run", "too-slow", undefined, 60_000);
  const c = runSucceeded(run)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "RunTimedOut");
  assert.match(c.message ?? "", /failed to finish within "20s"/);
  await requestAndPodGone(scn, request, pod);
});
