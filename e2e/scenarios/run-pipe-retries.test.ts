// quarry-e2e: needs-node
//
// A Pipe run's retries: a pipe pod that cannot run (its image is not on the
// node) fails the attempt with PodFailed; with one retry left the run tries
// again under a new request, records the first attempt in retriesStatus and
// fails only when both are spent. Bad input (a Pipe that does not exist)
// spends no retry.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pipeStrategies, pipes } from "@quarry/api";
import { pipeRequestsOf, pipeRun, usePipeRunScenario } from "@quarry/harness/pipe-runs";
import { configMapOutputs, pipeObject, pipeStrategy, scriptPod } from "@quarry/harness/pipe-scenario";
import { createRun, runSucceeded, waitForRun } from "@quarry/harness/runs";

const scenario = usePipeRunScenario("run-pipe-retries");

test("a pod that cannot run: PodFailed per attempt, retried once, then failed", async () => {
  const { scn } = scenario();
  const ns = scn.namespace;
  await scn.admin.create(
    pipeStrategies,
    pipeStrategy(ns, "no-image", scriptPod("quarry.local/e2e/absent:local", "true"), [], {
      outputs: configMapOutputs("/out/x"),
    }),
  );
  await scn.admin.create(
    pipes,
    pipeObject(ns, "no-image", { kind: "PipeStrategy", name: "no-image" }, [
      { file: "/out/x", kind: "ConfigMap", key: "x" },
    ]),
  );
  await createRun(scn.admin, pipeRun("CustomRun", scn, "flaky", "no-image", { retries: 1 }));
  const run = await waitForRun(scn, "CustomRun", "flaky", undefined, 150_000);
  const c = runSucceeded(run)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "PodFailed", c.message);
  assert.match(c.message ?? "", /absent:local/, "the message names what failed");
  assert.equal(run.status?.retriesStatus?.length, 1);
  assert.equal(run.status?.retriesStatus?.[0]?.conditions?.[0]?.reason, "PodFailed");
  const requests = await pipeRequestsOf(scn, "flaky");
  assert.equal(requests.length, 2, "one request per attempt");
  if (run.status?.childReferences !== undefined)
    assert.deepEqual(
      run.status.childReferences.map((r) => r.name).sort(),
      requests.map((r) => r.metadata.name).sort(),
    );
});

test("a Pipe that does not exist: PipeNotFound at once, no retry spent", async () => {
  const { scn } = scenario();
  await createRun(scn.admin, pipeRun("CustomRun", scn, "nothing", "no-such-pipe", { retries: 2 }));
  const run = await waitForRun(scn, "CustomRun", "nothing", undefined, 60_000);
  const c = runSucceeded(run)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "PipeNotFound");
  assert.match(c.message ?? "", /no-such-pipe/);
  assert.equal(run.status?.retriesStatus, undefined);
  assert.equal((await pipeRequestsOf(scn, "nothing")).length, 1);
});

test("a param the resolver owns: InvalidParams before any request", async () => {
  const { scn } = scenario();
  await createRun(
    scn.admin,
    pipeRun("CustomRun", scn, "shadow", "cert", { params: [{ name: "pipe", value: "other" }] }),
  );
  const run = await waitForRun(scn, "CustomRun", "shadow");
  const c = runSucceeded(run)!;
  assert.equal(c.reason, "InvalidParams");
  assert.match(c.message ?? "", /param "pipe" is the pipe resolver's own/);
  assert.equal((await pipeRequestsOf(scn, "shadow")).length, 0);
});
