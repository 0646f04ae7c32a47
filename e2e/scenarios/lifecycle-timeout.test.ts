// A request nobody resolves fails with ResolutionTimedOut at its deadline,
// with a message saying whether any resolver answered.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolutionRequests } from "@quarry/api";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRequest,
  finished,
  initialised,
  newRequest,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";
import { countEvents } from "@quarry/harness/transitions";

const scenario = useScenario("lc-timeout", {
  lifecycleConfig: { "default-maximum-resolution-timeout": "3s" },
  start: ["lifecycle-controller"],
});
const git = { "resolution.tekton.dev/type": "git" };

test("no resolver answered: the message names the resolver type", async () => {
  const scn = scenario();
  const created = await createRequest(scn.admin, newRequest(scn.namespace, "untouched", git));
  const c = succeeded(await waitForRequest(scn, "untouched", finished))!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "ResolutionTimedOut");
  assert.equal(c.message, "no resolver for type git answered within 3s");
  // deadline honoured by a requeue at the remaining time, not by polling later
  const took = Date.parse(c.lastTransitionTime!) - Date.parse(created.metadata.creationTimestamp!);
  assert.ok(took >= 2000 && took <= 5000, `timed out after ${took} ms`);
});

test("an unknown resolver name times out the same way", async () => {
  const scn = scenario();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "nonesuch", { "resolution.tekton.dev/type": "nonesuch" }),
  );
  const c = succeeded(await waitForRequest(scn, "nonesuch", finished))!;
  assert.equal(c.reason, "ResolutionTimedOut");
  assert.equal(c.message, "no resolver for type nonesuch answered within 3s");
});

test("a resolver that picked the request up but never finished: Tekton's message", async () => {
  const scn = scenario();
  await createRequest(scn.admin, newRequest(scn.namespace, "slow", git));
  await waitForRequest(scn, "slow", initialised);
  const accepted = { status: { annotations: { "quarry.dev/accepted-by": "git-resolver-0" } } };
  await scn.admin.mergePatch(resolutionRequests, scn.namespace, "slow", accepted, "status");
  const c = succeeded(await waitForRequest(scn, "slow", finished))!;
  assert.equal(c.reason, "ResolutionTimedOut");
  assert.equal(c.message, "resolution took longer than global timeout of 3s");
});

test("the timeout raises exactly one ResolutionTimedOut Event on the request", async () => {
  const scn = scenario();
  const events = await waitUntil("event", async () => {
    const counts = await countEvents(scn.admin, scn.namespace, "ResolutionTimedOut");
    return counts.has("untouched") ? counts : undefined;
  });
  assert.equal(events.get("untouched"), 1);
});
