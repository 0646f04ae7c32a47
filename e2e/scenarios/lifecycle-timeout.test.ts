// A request nobody resolves fails with ResolutionTimedOut at its deadline,
// with a message saying whether any resolver answered.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resolutionRequests } from "@quarry/kube";
import {
  createRequest,
  getRequest,
  newRequest,
  newScenario,
  type Scenario,
  setLifecycleConfig,
  succeeded,
} from "../harness/scenario.ts";
import { waitUntil } from "../harness/wait.ts";

let scn: Scenario;
before(async () => {
  scn = await newScenario("lc-timeout");
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "3s" });
  await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

async function terminal(name: string) {
  return waitUntil(
    `${name} terminal`,
    async () => {
      const r = await getRequest(scn.admin, scn.namespace, name);
      const c = succeeded(r);
      return c && c.status !== "Unknown" ? r : undefined;
    },
    { timeoutMs: 20_000 },
  );
}

test("no resolver answered: the message names the resolver type", async () => {
  const created = await createRequest(
    scn.admin,
    newRequest(scn.namespace, "untouched", { "resolution.tekton.dev/type": "git" }),
  );
  const rr = await terminal("untouched");
  const c = succeeded(rr)!;
  assert.equal(c.status, "False");
  assert.equal(c.reason, "ResolutionTimedOut");
  assert.equal(c.message, "no resolver for type git answered within 3s");
  // deadline honoured by a requeue at the remaining time, not by polling later
  const took = Date.parse(c.lastTransitionTime!) - Date.parse(created.metadata.creationTimestamp!);
  assert.ok(took >= 2000 && took <= 5000, `timed out after ${took} ms`);
});

test("an unknown resolver name times out the same way", async () => {
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "nonesuch", { "resolution.tekton.dev/type": "nonesuch" }),
  );
  const c = succeeded(await terminal("nonesuch"))!;
  assert.equal(c.reason, "ResolutionTimedOut");
  assert.equal(c.message, "no resolver for type nonesuch answered within 3s");
});

test("a resolver that picked the request up but never finished: Tekton's message", async () => {
  await createRequest(scn.admin, newRequest(scn.namespace, "slow", { "resolution.tekton.dev/type": "git" }));
  await waitUntil("initialised", async () => succeeded(await getRequest(scn.admin, scn.namespace, "slow")));
  await scn.admin.mergePatch(
    resolutionRequests,
    scn.namespace,
    "slow",
    { status: { annotations: { "quarry.dev/accepted-by": "git-resolver-0" } } },
    "status",
  );
  const c = succeeded(await terminal("slow"))!;
  assert.equal(c.reason, "ResolutionTimedOut");
  assert.equal(c.message, "resolution took longer than global timeout of 3s");
});

test("the timeout raises a Warning Event on the request", async () => {
  const events = await waitUntil("event", async () => {
    const list = await scn.admin.request<{
      items: { reason: string; type: string; involvedObject: { name: string } }[];
    }>("GET", `/api/v1/namespaces/${scn.namespace}/events`);
    const ev = list.items.filter(
      (e) => e.involvedObject.name === "untouched" && e.reason === "ResolutionTimedOut",
    );
    return ev.length ? ev : undefined;
  });
  assert.equal(events.length, 1);
  assert.equal(events[0]!.type, "Warning");
});
