// waitFor rejects with RequestNotFoundError when the request is deleted while
// it waits (e.g. its owners went away), instead of waiting forever.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { pendingGitRequest } from "@quarry/harness/requests";
import { useScenario } from "@quarry/harness/scenario";
import { RequestNotFoundError, waitFor } from "@quarry/requester";

const scenario = useScenario("rq-deleted");

test("waitFor: deletion while waiting → RequestNotFoundError(deleted)", async () => {
  const scn = scenario();
  const name = await pendingGitRequest(scn);
  // the handler is attached before the delete: the rejection may come before delete() returns
  const rejected = assert.rejects(
    waitFor(scn.admin, scn.namespace, name, { timeoutMs: 20_000 }),
    (err: unknown) => err instanceof RequestNotFoundError && err.deleted,
  );
  await new Promise((r) => setTimeout(r, 300));
  await scn.admin.delete(resolutionRequests, scn.namespace, name);
  await rejected;
  // and a request that never existed fails at once
  await assert.rejects(
    waitFor(scn.admin, scn.namespace, "git-00000000000000000000000000000000", { timeoutMs: 5_000 }),
    (err: unknown) => err instanceof RequestNotFoundError && !err.deleted,
  );
});
