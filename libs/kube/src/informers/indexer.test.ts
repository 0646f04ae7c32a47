import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference } from "@quarry/api";
import { createLogger } from "@quarry/observability";
import type { KubeClient, KubeObject, WatchEvent } from "../client/client.ts";
import { configMaps } from "../client/resources.ts";
import { byLabel, byOwnerUid } from "./indexer.ts";
import { Informer } from "./informer.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });

const owner = (uid: string, controller = true): OwnerReference => ({
  apiVersion: "v1",
  kind: "Owner",
  name: `owner-${uid}`,
  uid,
  controller,
});

function cm(name: string, rv: string, meta: Partial<KubeObject["metadata"]> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "ns", resourceVersion: rv, ...meta },
  };
}

/** Plays list/watch in memory: `items` is what the next list returns, push() feeds the open watch. */
function fakeApi(items: KubeObject[]) {
  const state = { items, queued: [] as WatchEvent<KubeObject>[], wake: () => {} };
  const client = {
    list: async () => ({ items: structuredClone(state.items), metadata: { resourceVersion: "1" } }),
    async *watch(_rt: unknown, _ns: unknown, _opts: unknown, signal: AbortSignal) {
      while (!signal.aborted) {
        const next = state.queued.shift();
        if (next) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => {
          state.wake = resolve;
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    },
  };
  return {
    client: client as unknown as KubeClient,
    state,
    push(event: WatchEvent<KubeObject>) {
      state.queued.push(event);
      state.wake();
    },
  };
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name).sort();

test("indexes follow adds, updates, deletes and a relist", async () => {
  const api = fakeApi([
    cm("a", "1", { ownerReferences: [owner("u1")], labels: { app: "x" } }),
    cm("b", "1", { ownerReferences: [owner("u1"), owner("u2", false)] }),
  ]);
  const informer = new Informer<KubeObject>(api.client, configMaps, { log, namespace: "ns", resyncMs: 0 });
  informer.addIndex("owner", byOwnerUid).addIndex("app", byLabel("app"));
  informer.start();
  await informer.waitForSync();
  assert.deepEqual(names(informer.byIndex("owner", "u1")), ["a", "b"]);
  assert.deepEqual(names(informer.byIndex("owner", "u2")), ["b"], "non-controller owners are indexed too");
  assert.deepEqual(names(informer.byIndex("app", "x")), ["a"]);
  assert.deepEqual(informer.byIndex("app", "missing"), []);

  // an update moves an object between values: the old value no longer lists it
  api.push({
    type: "MODIFIED",
    object: cm("a", "2", { ownerReferences: [owner("u2")], labels: { app: "y" } }),
  });
  api.push({ type: "ADDED", object: cm("c", "3", { labels: { app: "x" } }) });
  api.push({ type: "DELETED", object: cm("b", "4") });
  await until(() => informer.get("ns", "b") === undefined);
  assert.deepEqual(informer.byIndex("owner", "u1"), []);
  assert.deepEqual(names(informer.byIndex("owner", "u2")), ["a"]);
  assert.deepEqual(names(informer.byIndex("app", "x")), ["c"]);
  assert.deepEqual(names(informer.byIndex("app", "y")), ["a"]);

  // a relist (after 410) drops what vanished and indexes what appeared
  api.state.items = [cm("d", "9", { ownerReferences: [owner("u1")], labels: { app: "y" } })];
  api.push({
    type: "ERROR",
    object: { kind: "Status", code: 410, message: "too old" } as unknown as KubeObject,
  });
  await until(() => informer.get("ns", "d") !== undefined && informer.get("ns", "a") === undefined);
  assert.deepEqual(names(informer.byIndex("owner", "u1")), ["d"]);
  assert.deepEqual(informer.byIndex("owner", "u2"), []);
  assert.deepEqual(names(informer.byIndex("app", "y")), ["d"]);
  assert.deepEqual(informer.byIndex("app", "x"), []);
  await informer.stop();
});

test("an index added after sync covers the objects already cached; unknown or duplicate names throw", async () => {
  const api = fakeApi([cm("a", "1", { labels: { tier: "gold" } }), cm("b", "1")]);
  const informer = new Informer<KubeObject>(api.client, configMaps, { log, namespace: "ns", resyncMs: 0 });
  informer.start();
  await informer.waitForSync();
  informer.addIndex("tier", byLabel("tier"));
  assert.deepEqual(names(informer.byIndex("tier", "gold")), ["a"]);
  assert.throws(() => informer.addIndex("tier", byLabel("tier")), /already exists/);
  assert.throws(() => informer.byIndex("nope", "x"), /no index named nope/);
  await informer.stop();
});

test("byOwnerUid and byLabel", () => {
  assert.deepEqual(byOwnerUid(cm("a", "1")), []);
  assert.deepEqual(byOwnerUid(cm("a", "1", { ownerReferences: [owner("u1"), owner("u2", false)] })), [
    "u1",
    "u2",
  ]);
  assert.deepEqual(byLabel("app")(cm("a", "1", { labels: { app: "" } })), [""], "an empty value is a value");
  assert.deepEqual(byLabel("app")(cm("a", "1", { labels: { other: "x" } })), []);
});
