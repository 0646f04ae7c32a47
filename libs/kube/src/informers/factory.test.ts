import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import type { KubeObject } from "../client/client.ts";
import { configMaps, secrets } from "../client/resources.ts";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { InformerFactory } from "./factory.ts";
import { byOwnerUid } from "./indexer.ts";
import { dropManagedFields, keepWhole } from "./transforms.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const cm = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
});
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The list and watch calls the fake apiserver saw, as "verb resource namespace". */
function listWatches(client: FakeKubeClient): string[] {
  return client.calls
    .filter((c) => c.verb === "list" || c.verb === "watch")
    .map((c) => `${c.verb} ${c.resource} ${c.namespace}`);
}

test("two readers of one resource share one list, one watch and one cache; each hears every event", async () => {
  const client = new FakeKubeClient();
  client.seed(configMaps, cm("a"));
  const factory = new InformerFactory(client, log);
  const first = factory.informer<KubeObject>(configMaps, { namespace: "ns", resyncMs: 0 });
  const second = factory.informer<KubeObject>(configMaps, { namespace: "ns", resyncMs: 0 });
  assert.equal(first, second);
  assert.equal(factory.informers().length, 1);
  const heard: string[] = [];
  first.on({ onAdd: (o) => heard.push(`first ${o.metadata.name}`) });
  second.on({ onAdd: (o) => heard.push(`second ${o.metadata.name}`) });
  first.start();
  second.start();
  await second.waitForSync();
  await client.create(configMaps, cm("b"));
  await tick();
  await first.stop();
  assert.deepEqual(listWatches(client), ["list configmaps ns", "watch configmaps ns"]);
  assert.deepEqual(heard, ["first a", "second a", "first b", "second b"]);
  assert.deepEqual(
    second.list().map((o) => o.metadata.name),
    ["a", "b"],
  );
});

test("readers share an informer only for the same resource, namespaces, selectors and transform", () => {
  const factory = new InformerFactory(new FakeKubeClient(), log);
  const base = factory.informer(configMaps, { namespace: "a,b", transform: dropManagedFields });
  const rows = [
    { name: "the same namespaces in another order", opts: { namespace: "b, a" }, shared: true },
    { name: "another resource", rt: secrets, opts: { namespace: "a,b" }, shared: false },
    { name: "other namespaces", opts: { namespace: "a" }, shared: false },
    { name: "every namespace", opts: {}, shared: false },
    { name: "a label selector", opts: { namespace: "a,b", labelSelector: "x=y" }, shared: false },
    { name: "a field selector", opts: { namespace: "a,b", fieldSelector: "metadata.name=n" }, shared: false },
    { name: "another transform", opts: { namespace: "a,b", transform: keepWhole }, shared: false },
  ];
  for (const row of rows) {
    const inf = factory.informer(row.rt ?? configMaps, { transform: dropManagedFields, ...row.opts });
    assert.equal(inf === base, row.shared, row.name);
  }
});

test("a reader asking a shared informer for other run options is refused, naming the option", () => {
  const factory = new InformerFactory(new FakeKubeClient(), log);
  factory.informer(configMaps, { resyncMs: 0, watchdogMs: 60_000 });
  assert.throws(
    () => factory.informer(configMaps, { resyncMs: 0, watchdogMs: 90_000 }),
    /informer configmaps\.\/v1 .*watchdogMs 90000.*made with 60000/,
  );
  assert.throws(() => factory.informer(configMaps, { resyncMs: 1_000, watchdogMs: 60_000 }), /resyncMs/);
  assert.doesNotThrow(() => factory.informer(configMaps, { resyncMs: 0, watchdogMs: 60_000 }));
});

test("readers of a shared informer may each add the index they read; another function under its name throws", () => {
  const factory = new InformerFactory(new FakeKubeClient(), log);
  factory.informer(configMaps).addIndex("owner", byOwnerUid);
  assert.doesNotThrow(() => factory.informer(configMaps).addIndex("owner", byOwnerUid));
  assert.throws(() => factory.informer(configMaps).addIndex("owner", () => []), /already exists/);
});
