// lifecycle-controller-config is reloaded live; a malformed value keeps the
// last good config, is logged, and raises a Warning Event on the ConfigMap.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  createRequest,
  getRequest,
  newRequest,
  newScenario,
  type Scenario,
  setLifecycleConfig,
  succeeded,
} from "../harness/scenario.ts";
import type { RunningService } from "../harness/service.ts";
import { waitUntil } from "../harness/wait.ts";

let scn: Scenario;
let svc: RunningService;
before(async () => {
  scn = await newScenario("lc-config");
  svc = await scn.start("lifecycle-controller");
});
after(() => scn.cleanup());

async function timedOutMessage(name: string): Promise<string> {
  return waitUntil(
    `${name} timed out`,
    async () => {
      const c = succeeded(await getRequest(scn.admin, scn.namespace, name));
      return c?.reason === "ResolutionTimedOut" ? c.message : undefined;
    },
    { timeoutMs: 20_000 },
  );
}

test("a shorter timeout applies to requests already pending", async () => {
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "pending", { "resolution.tekton.dev/type": "git" }),
  );
  await waitUntil("initialised", async () =>
    succeeded(await getRequest(scn.admin, scn.namespace, "pending")),
  );
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "2s" });
  assert.equal(await timedOutMessage("pending"), "no resolver for type git answered within 2s");
});

test("a malformed value keeps the last good config and is reported", async () => {
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "ten minutes" });
  const event = await waitUntil("InvalidConfig event", async () => {
    const list = await scn.admin.request<{
      items: { reason: string; type: string; message: string; involvedObject: { kind: string } }[];
    }>("GET", `/api/v1/namespaces/${scn.namespace}/events`);
    return list.items.find((e) => e.reason === "InvalidConfig");
  });
  assert.equal(event.type, "Warning");
  assert.equal(event.involvedObject.kind, "ConfigMap");
  assert.match(event.message, /default-maximum-resolution-timeout/);
  assert.match(svc.logs(), /invalid config/);
  // still 2s, not the 1m default and not a crash
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "after-typo", { "resolution.tekton.dev/type": "git" }),
  );
  assert.equal(await timedOutMessage("after-typo"), "no resolver for type git answered within 2s");
  assert.equal((await svc.ops("/healthz")).status, 200);
});
