// Protocol edge cases a real apiserver will not produce on demand: a watch
// that goes silent, and a 410 that forces a relist. A tiny HTTP server plays
// the apiserver's list/watch endpoints (the rest is covered by e2e).
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { createLogger } from "@quarry/observability";
import { type KubeObject, RestKubeClient } from "../client/client.ts";
import { apiserverAgent } from "../client/http-transport.ts";
import { configMaps } from "../client/resources.ts";
import { Informer } from "./informer.ts";
import { dropManagedFields } from "./transforms.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const cm = (name: string, rv: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion: rv },
});

interface FakeApi {
  lists: number;
  watches: number;
  /** undefined answers 500 */
  onList: () => { items: KubeObject[]; rv: string } | undefined;
  onWatch: (res: ServerResponse, n: number, query: URLSearchParams) => void;
}

const servers: { close(): void }[] = [];
/** Path of the request being served (handlers run synchronously). */
let lastPath = "";
after(() => {
  for (const s of servers) s.close();
});

async function fakeApiserver(api: FakeApi): Promise<RestKubeClient> {
  const srv = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    lastPath = url.pathname;
    res.setHeader("Content-Type", "application/json");
    if (url.searchParams.get("watch") === "true") {
      api.watches++;
      res.writeHead(200);
      api.onWatch(res, api.watches, url.searchParams);
      return;
    }
    api.lists++;
    const listed = api.onList();
    if (!listed) {
      res.writeHead(500);
      res.end(JSON.stringify({ kind: "Status", code: 500, message: "etcd unavailable" }));
      return;
    }
    res.end(JSON.stringify({ items: listed.items, metadata: { resourceVersion: listed.rv } }));
  });
  srv.keepAliveTimeout = 100;
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  servers.push({
    close: () => {
      srv.closeAllConnections();
      srv.close();
    },
  });
  const server = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const agent = apiserverAgent(server);
  return new RestKubeClient({
    server,
    namespace: undefined,
    source: "test",
    authenticate: async () => ({ headers: { Authorization: "Bearer t" }, agent, tls: {} }),
  });
}

function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error("condition not met in time"));
      setTimeout(tick, 10);
    };
    tick();
  });
}

test("a silent watch is restarted by the watchdog from the last resourceVersion, without relisting", async () => {
  const seenRv: string[] = [];
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [cm("a", "1")], rv: "1" }),
    onWatch: (res, n, q) => {
      seenRv.push(q.get("resourceVersion") ?? "");
      if (n === 1) res.write(`${JSON.stringify({ type: "MODIFIED", object: cm("a", "2") })}\n`);
      if (n === 2) res.write(`${JSON.stringify({ type: "MODIFIED", object: cm("a", "3") })}\n`);
      // then say nothing and keep the connection open: a stalled watch
    },
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, {
    log,
    namespace: "ns",
    watchdogMs: 300,
    resyncMs: 0,
  });
  const updates: string[] = [];
  informer.on({ onUpdate: (_o, obj) => updates.push(obj.metadata.resourceVersion ?? "") });
  informer.start();
  await until(() => updates.includes("3"));
  await informer.stop();
  assert.equal(api.lists, 1, "no relist for a stall");
  assert.deepEqual(
    seenRv.slice(0, 2),
    ["1", "2"],
    "second watch resumes from the last event's resourceVersion",
  );
  assert.equal(informer.get("ns", "a")?.metadata.resourceVersion, "3");
});

/** A watch answering one event every `everyMs` until `count`, then staying open and silent. */
function steadyEvents(res: ServerResponse, name: string, everyMs: number, count: number): void {
  let sent = 0;
  const t = setInterval(() => {
    sent++;
    res.write(`${JSON.stringify({ type: "MODIFIED", object: cm(name, String(100 + sent)) })}\n`);
    if (sent >= count) clearInterval(t);
  }, everyMs);
  res.on("close", () => clearInterval(t));
}

test("the watchdog spares a watch whose events keep coming, over many of its periods", async () => {
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [cm("a", "1")], rv: "1" }),
    // 12 events 50 ms apart: 600 ms of a live watch, four times the watchdog's 150 ms
    onWatch: (res, n) => {
      if (n === 1) steadyEvents(res, "a", 50, 12);
    },
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, {
    log,
    namespace: "ns",
    watchdogMs: 150,
    resyncMs: 0,
  });
  informer.start();
  await until(() => informer.get("ns", "a")?.metadata.resourceVersion === "112");
  assert.equal(api.watches, 1, "a live watch is never restarted");
  // then silent: restarted a period later, from the last event
  await until(() => api.watches === 2);
  await informer.stop();
  assert.equal(api.lists, 1);
});

test("events of keys not admitted keep the watchdog fed: a replica leading none of their buckets keeps its watch", async () => {
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [], rv: "1" }),
    onWatch: (res, n) => {
      if (n === 1) steadyEvents(res, "other", 50, 12);
    },
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, {
    log,
    namespace: "ns",
    watchdogMs: 150,
    resyncMs: 0,
    admit: { admits: () => false, admitsAll: () => false },
  });
  informer.start();
  await until(() => informer.status().skipped === 12);
  assert.equal(api.watches, 1, "skipped events are events: no restart while they come");
  await until(() => api.watches === 2);
  await informer.stop();
  assert.equal(informer.status().objects, 0);
});

test("410 Gone relists and diffs the cache: missed deletes and adds are delivered", async () => {
  let listed = 0;
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => {
      listed++;
      return listed === 1
        ? { items: [cm("keep", "1"), cm("gone", "1")], rv: "10" }
        : { items: [cm("keep", "1"), cm("new", "12")], rv: "12" };
    },
    onWatch: (res, n) => {
      if (n === 1) {
        res.end(
          `${JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410, message: "too old" } })}\n`,
        );
      }
    },
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, { log, namespace: "ns", resyncMs: 0 });
  const added: string[] = [];
  const deleted: string[] = [];
  const updated: string[] = [];
  informer.on({
    onAdd: (o) => added.push(o.metadata.name!),
    onDelete: (o) => deleted.push(o.metadata.name!),
    onUpdate: (_old, o) => updated.push(o.metadata.name!),
  });
  informer.start();
  await informer.waitForSync();
  await until(() => deleted.length > 0 && added.includes("new"));
  await informer.stop();
  assert.equal(api.lists, 2);
  assert.deepEqual(deleted, ["gone"]);
  assert.deepEqual(added.sort(), ["gone", "keep", "new"]);
  assert.deepEqual(updated, [], "unchanged objects are not reported as updates");
  assert.deepEqual(
    informer
      .list()
      .map((o) => o.metadata.name)
      .sort(),
    ["keep", "new"],
  );
});

test("list errors are retried with backoff until the server answers", async () => {
  let failures = 2;
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => (failures-- > 0 ? undefined : { items: [cm("a", "1")], rv: "1" }),
    onWatch: () => {},
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, { log, namespace: "ns", resyncMs: 0 });
  informer.start();
  await informer.waitForSync();
  assert.equal(api.lists, 3);
  assert.equal(informer.isRunning(), true);
  assert.ok(informer.get("ns", "a"));
  await informer.stop();
  assert.equal(informer.isRunning(), false);
});

test("refill cuts a failed watch's backoff short: a bucket just gained lists at once, not after the wait", async (t) => {
  let failing = true;
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [cm("a", "1")], rv: "1" }),
    // the apiserver cuts every watch off at once: the informer backs off longer each time
    onWatch: (res) => (failing ? res.destroy() : undefined),
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, { log, namespace: "ns", resyncMs: 0 });
  t.after(() => informer.stop());
  informer.start();
  await until(() => api.watches >= 4); // 200, 400 and 800 ms waited; the next wait is 1.6 s or more
  failing = false;
  const lists = api.lists;
  const t0 = performance.now();
  await informer.refill();
  const ms = performance.now() - t0;
  assert.equal(api.lists, lists + 1, "relisted");
  assert.ok(ms < 1000, `refill took ${Math.round(ms)} ms: it waited out the backoff`);
});

test("several namespaces: one list/watch each, one cache; a relist of one leaves the other's objects alone", async () => {
  const listedFor: string[] = [];
  let relisted = false;
  const cmIn = (ns: string, name: string, rv: string): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns, resourceVersion: rv },
  });
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [], rv: "1" }),
    onWatch: (res) => res.write(""),
  };
  const client = await fakeApiserver(api);
  // route by namespace in the path: the fake server's handlers get the whole request
  api.onList = () => {
    const ns = lastPath.split("/")[4] ?? "";
    listedFor.push(ns);
    if (ns === "a") return relisted ? { items: [], rv: "5" } : { items: [cmIn("a", "x", "1")], rv: "1" };
    return { items: [cmIn("b", "y", "1")], rv: "1" };
  };
  api.onWatch = (res, _n, q) => {
    const ns = lastPath.split("/")[4] ?? "";
    if (ns === "a" && !relisted && q.get("resourceVersion") === "1") {
      relisted = true;
      res.end(
        `${JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410, message: "too old" } })}\n`,
      );
    }
  };
  const informer = new Informer<KubeObject>(client, configMaps, { log, namespace: "a, b", resyncMs: 0 });
  const deleted: string[] = [];
  informer.on({ onDelete: (o) => deleted.push(`${o.metadata.namespace}/${o.metadata.name}`) });
  informer.start();
  await informer.waitForSync();
  await until(() => deleted.length > 0);
  await informer.stop();
  assert.deepEqual(deleted, ["a/x"]);
  assert.ok(informer.get("b", "y"), "b's object survives a's relist");
  assert.deepEqual([...new Set(listedFor)].sort(), ["a", "b"]);
});

test("a transform is applied before caching and before handlers, to listed and watched objects", async () => {
  const managed = (name: string, rv: string): KubeObject => {
    const obj = cm(name, rv);
    (obj.metadata as { managedFields?: unknown[] }).managedFields = [{ manager: "kubectl" }];
    return obj;
  };
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [managed("a", "1")], rv: "1" }),
    onWatch: (res, n) => {
      if (n === 1) res.write(`${JSON.stringify({ type: "ADDED", object: managed("b", "2") })}\n`);
    },
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, {
    log,
    namespace: "ns",
    resyncMs: 0,
    transform: dropManagedFields,
  });
  const handed: KubeObject[] = [];
  informer.on({ onAdd: (obj) => handed.push(obj) });
  informer.start();
  await until(() => handed.length === 2);
  await informer.stop();
  for (const obj of [...handed, ...informer.list()])
    assert.equal("managedFields" in obj.metadata, false, `${obj.metadata.name} still has managedFields`);
});

test("admit: other keys' events are skipped unparsed (their resourceVersion kept), refill lists newly admitted keys in, evict drops keys silently", async () => {
  const admitted = new Set(["ns/a"]);
  const seenRv: string[] = [];
  let world = [cm("a", "1"), cm("b", "1")];
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: world, rv: String(10 + api.lists) }),
    onWatch: (res, n, q) => {
      seenRv.push(q.get("resourceVersion") ?? "");
      if (n === 1) {
        res.write(`${JSON.stringify({ type: "MODIFIED", object: cm("b", "20") })}\n`);
        res.write(`${JSON.stringify({ type: "MODIFIED", object: cm("a", "21") })}\n`);
        res.write(`${JSON.stringify({ type: "MODIFIED", object: cm("b", "22") })}\n`);
        res.end(); // the watch times out: the next one starts from the last skipped event's version
      }
    },
  };
  const client = await fakeApiserver(api);
  const informer = new Informer<KubeObject>(client, configMaps, {
    log,
    namespace: "ns",
    resyncMs: 0,
    admit: { admits: (key) => admitted.has(key), admitsAll: () => false },
  });
  const seen: string[] = [];
  informer.on({
    onAdd: (o) => seen.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onUpdate: (_o, o) => seen.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
  });
  informer.start();
  await until(() => seenRv.length >= 2);
  assert.deepEqual(seen, ["add a@1", "update a@21"]);
  assert.equal(seenRv[1], "22", "resumed after the skipped event");
  assert.equal(informer.status().skipped, 2);
  assert.deepEqual(
    informer.list().map((o) => o.metadata.name),
    ["a"],
  );

  // b's bucket is admitted: a refill lists it in
  admitted.add("ns/b");
  world = [cm("a", "21"), cm("b", "22")];
  await informer.refill();
  assert.deepEqual(seen.slice(2), ["add b@22"]);

  // a leaves (its bucket lost): evicted without a delete; gone from the next list, not deleted either
  admitted.delete("ns/a");
  assert.equal(
    informer.evict((k) => k === "ns/a"),
    1,
  );
  world = [cm("b", "22")];
  await informer.refill();
  // b really deleted while admitted: a relist that misses it delivers the delete
  world = [];
  await informer.refill();
  await informer.stop();
  assert.deepEqual(seen.slice(3), ["delete b"]);
});

test("admit's label selector joins the informer's on lists and watches; rewatch restarts the watch with it, without relisting", async () => {
  let narrowed: string | undefined = "quarry.dev/shard notin (1,2)";
  const lists: string[] = [];
  const watches: { selector: string; rv: string }[] = [];
  const api: FakeApi = {
    lists: 0,
    watches: 0,
    onList: () => ({ items: [cm("a", "1")], rv: "10" }),
    onWatch: (res, _n, q) => {
      watches.push({ selector: q.get("labelSelector") ?? "", rv: q.get("resourceVersion") ?? "" });
      res.write(`${JSON.stringify({ type: "MODIFIED", object: cm("a", String(10 + watches.length)) })}\n`);
      // held open until the informer aborts it
    },
  };
  const client = await fakeApiserver(api);
  const realList = client.list.bind(client);
  client.list = ((...args: Parameters<typeof client.list>) => {
    lists.push(args[2]?.labelSelector ?? "");
    return realList(...args);
  }) as typeof client.list;
  const informer = new Informer<KubeObject>(client, configMaps, {
    log,
    namespace: "ns",
    resyncMs: 0,
    labelSelector: "app=x",
    admit: { admits: () => true, admitsAll: () => false, labelSelector: () => narrowed },
  });
  informer.start();
  await until(() => watches.length === 1 && informer.get("ns", "a")?.metadata.resourceVersion === "11");
  narrowed = "quarry.dev/shard notin (1,2,3)";
  informer.rewatch();
  await until(() => watches.length === 2);
  narrowed = undefined;
  informer.rewatch();
  await until(() => watches.length === 3);
  await informer.stop();
  assert.deepEqual(lists, ["app=x,quarry.dev/shard notin (1,2)"], "listed once");
  assert.deepEqual(watches, [
    { selector: "app=x,quarry.dev/shard notin (1,2)", rv: "10" },
    { selector: "app=x,quarry.dev/shard notin (1,2,3)", rv: "11" },
    { selector: "app=x", rv: "12" },
  ]);
});
