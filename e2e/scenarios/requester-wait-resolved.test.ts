// waitFor returns the resolved outcome once the condition is True, and not
// before: data alone (condition still Unknown) is pending, as for Tekton.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { pendingGitRequest } from "@quarry/harness/requests";
import { useScenario } from "@quarry/harness/scenario";
import { waitFor } from "@quarry/requester";

const scenario = useScenario("rq-resolved");

test("waitFor: data + Succeeded=True → resolved with bytes, annotations, refSource", async () => {
  const scn = scenario();
  const name = await pendingGitRequest(scn);
  let settled = false;
  const waiting = waitFor(scn.admin, scn.namespace, name, { timeoutMs: 20_000 }).finally(() => {
    settled = true;
  });
  const patchStatus = (status: object) =>
    scn.admin.mergePatch(resolutionRequests, scn.namespace, name, { status }, "status");

  const yaml = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: build\n";
  const refSource = {
    uri: "git+https://example.com/r.git",
    digest: { sha1: "a".repeat(40) },
    entryPoint: "task.yaml",
  };
  // the test plays the resolver, then the lifecycle controller
  await patchStatus({
    conditions: [
      {
        type: "Succeeded",
        status: "Unknown",
        reason: "ResolutionInProgress",
        message: "waiting for resolver",
      },
    ],
    data: Buffer.from(yaml).toString("base64"),
    annotations: { "resolution.tekton.dev/content-type": "application/x-yaml" },
    refSource,
  });
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(settled, false, "data with the condition still Unknown must not count as resolved");
  await patchStatus({ conditions: [{ type: "Succeeded", status: "True", reason: "", message: "" }] });

  const outcome = await waiting;
  assert.equal(outcome.state, "resolved");
  if (outcome.state !== "resolved") return;
  assert.equal(new TextDecoder().decode(outcome.data), yaml);
  assert.equal(outcome.annotations["resolution.tekton.dev/content-type"], "application/x-yaml");
  assert.deepEqual(outcome.refSource, refSource);
});
