// quarry-e2e: needs-node
//
// Deleting a Pipe run garbage-collects what it made: the ConfigMap and Secret
// it owns and its ResolutionRequest go with it (kube-controller-manager's
// garbage collector on the test control plane, nothing of Quarry's).
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import { CERT_PIPE, pipeRequestsOf, pipeRun, usePipeRunScenario } from "@quarry/harness/pipe-runs";
import { isGone } from "@quarry/harness/pipe-scenario";
import { createRun, resourceOf, runSucceeded, waitForRun } from "@quarry/harness/runs";
import { configMaps, secrets } from "@quarry/kube";

const scenario = usePipeRunScenario("run-pipe-gc");

test("deleting the owning run garbage-collects its ConfigMaps, Secrets and request", async () => {
  const { scn } = scenario();
  await createRun(
    scn.admin,
    pipeRun("CustomRun", scn, "gc", CERT_PIPE, { params: [{ name: "cn", value: "gc.test" }] }),
  );
  const run = await waitForRun(scn, "CustomRun", "gc", undefined, 150_000);
  assert.equal(runSucceeded(run)?.status, "True", runSucceeded(run)?.message);
  const results = Object.fromEntries((run.status?.results ?? []).map((r) => [r.name, r.value]));
  const [rr] = await pipeRequestsOf(scn, "gc");
  assert.ok(rr, "the run's request");
  // all there while the run is
  assert.equal(await isGone(scn, secrets, scn.namespace, results["tls-key"]!), false);
  assert.equal(await isGone(scn, configMaps, scn.namespace, results["tls-crt"]!), false);

  await scn.admin.delete(resourceOf("CustomRun"), scn.namespace, "gc");
  const gone = async () =>
    (await isGone(scn, secrets, scn.namespace, results["tls-key"]!)) &&
    (await isGone(scn, configMaps, scn.namespace, results["tls-crt"]!)) &&
    (await isGone(scn, resolutionRequests, scn.namespace, rr.metadata.name!));
  await waitUntil(
    "the run's Secret, ConfigMap and request garbage-collected",
    async () => (await gone()) || undefined,
    {
      timeoutMs: 60_000,
    },
  );
});
