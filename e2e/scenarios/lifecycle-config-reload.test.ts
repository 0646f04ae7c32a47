// lifecycle-controller-config is reloaded live; a malformed value keeps the
// last good config, is logged, and raises a Warning Event on the ConfigMap.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import {
  createRequest,
  finished,
  initialised,
  newRequest,
  setLifecycleConfig,
  succeeded,
  useScenario,
  waitForRequest,
} from "@quarry/harness/scenario";

const scenario = useScenario("lc-config", { start: ["lifecycle-controller"] });

async function finalMessage(name: string): Promise<string | undefined> {
  return succeeded(await waitForRequest(scenario(), name, finished))?.message;
}

test("a shorter timeout applies to requests already pending", async () => {
  const scn = scenario();
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "pending", { "resolution.tekton.dev/type": "git" }),
  );
  await waitForRequest(scn, "pending", initialised);
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "2s" });
  assert.equal(await finalMessage("pending"), "no resolver for type git answered within 2s");
});

test("a malformed value keeps the last good config and is reported", async () => {
  const scn = scenario();
  const svc = scn.services[0]!;
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
  assert.equal(await finalMessage("after-typo"), "no resolver for type git answered within 2s");
  assert.equal((await svc.ops("/healthz")).status, 200);
});
