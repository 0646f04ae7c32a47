// The runtime's wiring on a fake apiserver: its controllers' reconciles are
// handed the service's stop signal and the controller's logger, and its
// readers of one resource share one list/watch.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "./client/client.ts";
import { configMaps } from "./client/resources.ts";
import type { ReconcileContext } from "./queue/controller.ts";
import { type RuntimeSettings, ServiceRuntime } from "./runtime.ts";
import { FakeKubeClient } from "./testing/fake-client.ts";

// ServiceRuntime makes its own logger from LOG_LEVEL
process.env.LOG_LEVEL = process.env.TEST_LOG ?? "silent";
const settings: RuntimeSettings = {
  systemNamespace: "sys",
  watchNamespace: "app",
  opsPort: 0,
  opsHost: "127.0.0.1",
  concurrency: 2,
  shutdownTimeoutMs: 5_000,
};

async function until(what: string, ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "app" } });

test("a reconcile in flight at shutdown sees its signal aborted, and logs as its controller", async () => {
  const fake = new FakeKubeClient();
  fake.seed(configMaps, cm("a"));
  const runtime = new ServiceRuntime("svc", settings, fake);
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const contexts: ReconcileContext[] = [];
  const controller = runtime.controller("widgets", {
    reconcile: async (_key, ctx) => {
      contexts.push(ctx);
      await gate;
      return undefined;
    },
  });
  runtime.informer<KubeObject>(configMaps).on(controller.handlers());
  await runtime.run();
  await until("the reconcile to start", () => contexts.length === 1);
  const ctx = contexts[0]!;
  assert.equal(ctx.signal.aborted, false);
  assert.deepEqual(ctx.log.bindings(), { service: "svc", controller: "widgets" });
  const stopped = runtime.shutdown();
  assert.equal(ctx.signal.aborted, true, "aborted as shutdown starts, before the drain");
  release();
  await stopped;
});

test("two controllers reading one resource: one list and one watch", async (t) => {
  const fake = new FakeKubeClient();
  fake.seed(configMaps, cm("a"));
  const runtime = new ServiceRuntime("svc", settings, fake);
  t.after(() => runtime.shutdown());
  const reconciled: string[] = [];
  for (const name of ["first", "second"]) {
    const controller = runtime.controller(name, {
      reconcile: async (key) => {
        reconciled.push(`${name} ${key}`);
        return undefined;
      },
    });
    runtime.informer<KubeObject>(configMaps).on(controller.handlers());
  }
  await runtime.run();
  await until("both controllers to reconcile", () => reconciled.length === 2);
  assert.deepEqual(reconciled.sort(), ["first app/a", "second app/a"]);
  const listWatches = fake.calls.filter((c) => c.resource === "configmaps" && c.namespace === "app");
  assert.deepEqual(
    listWatches.map((c) => c.verb),
    ["list", "watch"],
  );
  assert.equal(runtime.readiness().ok, true);
});
