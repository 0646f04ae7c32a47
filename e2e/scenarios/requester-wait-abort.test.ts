// waitFor stops promptly when the caller's AbortSignal fires, with an
// AbortError that names the request.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pendingGitRequest } from "@quarry/harness/requests";
import { useScenario } from "@quarry/harness/scenario";
import { WaitAbortedError, waitFor } from "@quarry/requester";

const scenario = useScenario("rq-abort");

test("waitFor: abort rejects at once with WaitAbortedError (AbortError)", async () => {
  const scn = scenario();
  const name = await pendingGitRequest(scn);
  const ac = new AbortController();
  const waiting = waitFor(scn.admin, scn.namespace, name, { signal: ac.signal });
  await new Promise((r) => setTimeout(r, 300)); // the watch is open and idle
  const abortedAt = Date.now();
  ac.abort(new Error("run cancelled"));
  await assert.rejects(waiting, (err: unknown) => {
    assert.ok(err instanceof WaitAbortedError);
    assert.equal(err.name, "AbortError");
    assert.match(err.message, new RegExp(`${scn.namespace}/${name}`));
    assert.equal((err.cause as Error).message, "run cancelled");
    return true;
  });
  assert.ok(Date.now() - abortedAt < 1_000, "abort must not wait for the watch to end");
  // an already aborted signal rejects without waiting
  await assert.rejects(waitFor(scn.admin, scn.namespace, name, { signal: ac.signal }), WaitAbortedError);
});
