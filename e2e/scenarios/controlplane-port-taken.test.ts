// The test control plane picks free ports and binds them a moment later;
// another process (a parallel test run, an outgoing connection) can take one
// in between. Such a start is retried on new ports instead of failing the run.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ControlPlane, freePort, startControlPlane } from "@quarry/devcluster/controlplane";
import { adminClient } from "@quarry/harness/env";
import { type KubeObject, namespaces } from "@quarry/kube";

let cp: ControlPlane | undefined;
let squatter: Server | undefined;
after(async () => {
  await cp?.stop();
  squatter?.close();
});

test("a port taken between pick and bind: the control plane starts on new ports", {
  timeout: 180_000,
}, async () => {
  squatter = createServer();
  const taken = await new Promise<number>((resolve) => {
    squatter!.listen(0, "127.0.0.1", () => resolve((squatter!.address() as { port: number }).port));
  });
  let picks = 0;
  const logs: string[] = [];
  cp = await startControlPlane({
    log: (m) => logs.push(m),
    // etcd's client port is the first pick of the first attempt
    pickPort: () => (picks++ === 0 ? Promise.resolve(taken) : freePort()),
  });
  assert.ok(picks >= 6, `a second set of ports was picked (${picks} picks)`);
  assert.ok(!cp.server.endsWith(`:${taken}`));
  assert.ok(
    logs.some((m) => m.includes("a port was taken before it was bound (attempt 1)")),
    JSON.stringify(logs),
  );
  assert.ok(existsSync(join(cp.dir, "etcd.log.attempt-1")), "the failed attempt's log is kept");
  const info = { server: cp.server, caFile: cp.caFile, dir: cp.dir, adminKubeconfig: cp.adminKubeconfig };
  const ns = await adminClient(info).get<KubeObject>(namespaces, undefined, "default");
  assert.equal(ns.metadata.name, "default", "the apiserver answers");
});
