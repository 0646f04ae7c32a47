// Restart kube-apiserver while the lifecycle controller runs: its informer
// reconnects and every request still reaches its terminal condition once.
// Uses a private control plane so the restart does not disturb other tests.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resolutionRequests } from "@quarry/api";

import { type ControlPlane, startControlPlane } from "@quarry/devcluster/controlplane";
import { installQuarryApi } from "@quarry/devcluster/install";
import { waitUntil } from "@quarry/devcluster/wait";
import { adminClient } from "@quarry/harness/env";
import {
  createRequest,
  getRequest,
  newRequest,
  newScenario,
  type Scenario,
  setLifecycleConfig,
  succeeded,
} from "@quarry/harness/scenario";
import { countEvents } from "@quarry/harness/transitions";

let cp: ControlPlane;
let scn: Scenario;
before(async () => {
  cp = await startControlPlane();
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  await installQuarryApi(adminClient(info));
  scn = await newScenario("lc-apirestart", { cp: info });
  // long enough that the requests created before the restart are still pending when their data is
  // written after it, on a loaded machine (the restart alone can take 10 s there)
  await setLifecycleConfig(scn, { "default-maximum-resolution-timeout": "40s" });
  await scn.start("lifecycle-controller");
});
after(async () => {
  await scn?.cleanup();
  await cp?.stop();
});

test("requests created before and after an apiserver restart all complete", {
  timeout: 180_000,
}, async () => {
  const before = Array.from({ length: 40 }, (_, i) => `before-${i}`);
  const afterRestart = Array.from({ length: 40 }, (_, i) => `after-${i}`);
  const label = { "resolution.tekton.dev/type": "git" };
  await Promise.all(before.map((n) => createRequest(scn.admin, newRequest(scn.namespace, n, label))));
  await cp.restartApiserver();
  await Promise.all(afterRestart.map((n) => createRequest(scn.admin, newRequest(scn.namespace, n, label))));
  const all = [...before, ...afterRestart];
  const resolved = new Set(all.filter((_, i) => i % 3 !== 0));
  const data = Buffer.from("kind: Task\n").toString("base64");
  await Promise.all(
    [...resolved].map((n) =>
      scn.admin.mergePatch(resolutionRequests, scn.namespace, n, { status: { data } }, "status"),
    ),
  );
  await waitUntil(
    "all terminal",
    async () => {
      const list = await scn.admin.list<import("@quarry/api").ResolutionRequest>(
        resolutionRequests,
        scn.namespace,
      );
      return (
        list.items.length === all.length &&
        list.items.every((r) => (succeeded(r)?.status ?? "Unknown") !== "Unknown")
      );
    },
    { timeoutMs: 100_000, intervalMs: 500 },
  );
  for (const n of all) {
    const c = succeeded(await getRequest(scn.admin, scn.namespace, n))!;
    if (resolved.has(n)) assert.equal(c.status, "True", n);
    else assert.equal(c.reason, "ResolutionTimedOut", n);
  }
  const timeouts = await countEvents(scn.admin, scn.namespace, "ResolutionTimedOut");
  for (const n of all.filter((x) => !resolved.has(x)))
    assert.equal(timeouts.get(n), 1, `${n} timeout events`);
});
