// waitFor gives up after timeoutMs with a TimeoutError that says what it last saw.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { pendingGitRequest } from "@quarry/harness/requests";
import { useScenario } from "@quarry/harness/scenario";
import { WaitTimeoutError, waitFor } from "@quarry/requester";

const scenario = useScenario("rq-timeout");

test("waitFor: timeoutMs rejects with WaitTimeoutError naming the last state", async () => {
  const scn = scenario();
  const name = await pendingGitRequest(scn);
  await scn.admin.mergePatch(
    resolutionRequests,
    scn.namespace,
    name,
    {
      status: {
        conditions: [
          {
            type: "Succeeded",
            status: "Unknown",
            reason: "ResolutionInProgress",
            message: "waiting for resolver",
          },
        ],
      },
    },
    "status",
  );
  const started = Date.now();
  await assert.rejects(waitFor(scn.admin, scn.namespace, name, { timeoutMs: 700 }), (err: unknown) => {
    assert.ok(err instanceof WaitTimeoutError);
    assert.equal(err.name, "TimeoutError");
    assert.match(err.message, /within 700 ms/);
    assert.match(err.message, /ResolutionInProgress: waiting for resolver/);
    return true;
  });
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 650 && elapsed < 2_000, `timed out after ${elapsed} ms`);
});
