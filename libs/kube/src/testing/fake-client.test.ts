import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@quarry/observability";
import type { KubeObject } from "../client/client.ts";
import { ApiError, isApiError } from "../client/errors.ts";
import { lockedMergePatch } from "../client/patch.ts";
import { configMaps, namespaces, type ResourceType } from "../client/resources.ts";
import { Informer } from "../informers/informer.ts";
import { FakeKubeClient } from "./fake-client.ts";

const widgets: ResourceType = {
  group: "example.dev",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

interface Widget extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const T0 = Date.parse("2026-01-01T00:00:00.250Z");
const fake = () => new FakeKubeClient({ now: () => T0 });
const widget = (name: string, extra: Partial<Widget> = {}): Widget => ({
  apiVersion: "example.dev/v1",
  kind: "Widget",
  metadata: { name, namespace: "ns" },
  spec: { size: 1 },
  ...extra,
});

async function rejects(p: Promise<unknown>, status: number, reason?: string): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(isApiError(err, status), `expected HTTP ${status}, got ${String(err)}`);
    if (reason) assert.equal(err.reason, reason);
    return err;
  }
  assert.fail(`expected HTTP ${status}, but the call succeeded`);
}

test("create assigns uid, resourceVersion, generation and a second-resolution creationTimestamp; drops status", async () => {
  const c = fake();
  const a = await c.create(widgets, widget("a", { status: { ready: true } }));
  const b = await c.create(widgets, widget("b"));
  assert.equal(a.metadata.generation, 1);
  assert.equal(a.metadata.creationTimestamp, "2026-01-01T00:00:00Z");
  assert.ok(a.metadata.uid && a.metadata.uid !== b.metadata.uid);
  assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
  assert.equal(a.status, undefined);
  assert.deepEqual(await c.get(widgets, "ns", "a"), a);
});

test("create: AlreadyExists, generateName, a name is required", async () => {
  const c = fake();
  await c.create(widgets, widget("a"));
  await rejects(c.create(widgets, widget("a")), 409, "AlreadyExists");
  const g1 = await c.create<KubeObject>(widgets, { metadata: { generateName: "w-", namespace: "ns" } });
  const g2 = await c.create<KubeObject>(widgets, { metadata: { generateName: "w-", namespace: "ns" } });
  assert.match(g1.metadata.name ?? "", /^w-[a-z0-9]{5}$/);
  assert.notEqual(g1.metadata.name, g2.metadata.name);
  assert.equal(c.actions[2]?.name, g1.metadata.name);
  await rejects(c.create(widgets, { metadata: { namespace: "ns" } }), 422, "Invalid");
  await rejects(c.create(widgets, { metadata: { name: "x" } }), 400);
});

test("get, patch, replace and delete of a missing object are 404 NotFound", async () => {
  const c = fake();
  const err = await rejects(c.get(widgets, "ns", "nope"), 404, "NotFound");
  assert.match(err.message, /widgets\.example\.dev "nope" not found/);
  await rejects(c.mergePatch(widgets, "ns", "nope", { spec: {} }), 404);
  await rejects(c.replace(widgets, widget("nope")), 404);
  await rejects(c.delete(widgets, "ns", "nope"), 404);
});

test("merge patch follows RFC 7386: nested merge, null deletes, arrays replace", async () => {
  const c = fake();
  c.seed(widgets, widget("a", { spec: { keep: "k", drop: "d", list: [1, 2], nested: { x: 1, y: 2 } } }));
  const out = await c.mergePatch<Widget>(widgets, "ns", "a", {
    spec: { drop: null, list: [3], nested: { y: null, z: 3 } },
  });
  assert.deepEqual(out.spec, { keep: "k", list: [3], nested: { x: 1, z: 3 } });
});

test("a patch or replace carrying a stale resourceVersion is a 409 Conflict; the current one passes", async () => {
  const c = fake();
  const [a] = c.seed(widgets, widget("a"));
  const rv = a!.metadata.resourceVersion;
  await c.mergePatch(widgets, "ns", "a", { metadata: { resourceVersion: rv }, spec: { size: 2 } });
  await rejects(
    c.mergePatch(widgets, "ns", "a", { metadata: { resourceVersion: rv }, spec: { size: 3 } }),
    409,
    "Conflict",
  );
  await rejects(c.replace(widgets, { ...a!, spec: { size: 4 } }), 409, "Conflict");
  await rejects(c.delete(widgets, "ns", "a", { preconditions: { resourceVersion: rv } }), 409);
  assert.deepEqual(c.object<Widget>(widgets, "ns", "a")?.spec, { size: 2 });
  assert.deepEqual(
    c.actions.map((x) => [x.verb, x.error]),
    [
      ["patch", undefined],
      ["patch", 409],
      ["update", 409],
      ["delete", 409],
    ],
  );
});

test("generation moves with spec changes only; a no-op write keeps the resourceVersion", async () => {
  const c = fake();
  const [a] = c.seed(widgets, widget("a"));
  const labelled = await c.mergePatch(widgets, "ns", "a", { metadata: { labels: { x: "y" } } });
  assert.equal(labelled.metadata.generation, 1);
  assert.notEqual(labelled.metadata.resourceVersion, a!.metadata.resourceVersion);
  const status = await c.mergePatch(widgets, "ns", "a", { status: { ok: true } }, "status");
  assert.equal(status.metadata.generation, 1);
  const spec = await c.mergePatch(widgets, "ns", "a", { spec: { size: 5 } });
  assert.equal(spec.metadata.generation, 2);
  const same = await c.mergePatch(widgets, "ns", "a", { spec: { size: 5 } });
  assert.equal(same.metadata.resourceVersion, spec.metadata.resourceVersion);
  assert.equal(c.actions.length, 4, "a no-op write is still a recorded call");
});

test("status subresource: a status write changes only .status, a main write never changes it", async () => {
  const c = fake();
  c.seed(widgets, widget("a", { status: { phase: "old" } }));
  const s = await c.mergePatch<Widget>(
    widgets,
    "ns",
    "a",
    { metadata: { labels: { sneaky: "x" } }, spec: { size: 9 }, status: { phase: "new" } },
    "status",
  );
  assert.deepEqual(s.status, { phase: "new" });
  assert.deepEqual(s.spec, { size: 1 });
  assert.equal(s.metadata.labels, undefined);
  const m = await c.mergePatch<Widget>(widgets, "ns", "a", { spec: { size: 2 }, status: { phase: "lost" } });
  assert.deepEqual(m.status, { phase: "new" });
  const r = await c.replace<Widget>(widgets, { ...m, status: { phase: "lost" } });
  assert.deepEqual(r.status, { phase: "new" });
  const rs = await c.replace<Widget>(
    widgets,
    { ...r, spec: { size: 7 }, status: { phase: "put" } },
    "status",
  );
  assert.deepEqual([rs.spec, rs.status], [{ size: 2 }, { phase: "put" }]);
  await rejects(c.mergePatch(widgets, "ns", "a", {}, "scale"), 404);
});

test("server-owned metadata cannot be patched", async () => {
  const c = fake();
  const [a] = c.seed(widgets, widget("a"));
  const out = await c.mergePatch(widgets, "ns", "a", {
    metadata: { uid: "forged", name: "b", generation: 99, creationTimestamp: "1999-01-01T00:00:00Z" },
  });
  assert.deepEqual(out.metadata, a!.metadata);
});

test("every write is logged with verb, resource, namespace, name, subresource and body", async () => {
  const c = fake();
  c.seed(widgets, widget("a"));
  await c.mergePatch(widgets, "ns", "a", { status: { x: 1 } }, "status");
  await c.create(configMaps, { metadata: { name: "cm", namespace: "ns" } });
  await c.delete(configMaps, "ns", "cm");
  await c.get(widgets, "ns", "a");
  assert.deepEqual(c.actions, [
    {
      verb: "patch",
      resource: "widgets",
      namespace: "ns",
      name: "a",
      subresource: "status",
      body: { status: { x: 1 } },
    },
    {
      verb: "create",
      resource: "configmaps",
      namespace: "ns",
      name: "cm",
      subresource: "",
      body: { metadata: { name: "cm", namespace: "ns" } },
    },
    { verb: "delete", resource: "configmaps", namespace: "ns", name: "cm", subresource: "", body: undefined },
  ]);
  assert.equal(c.calls.length, 4, "reads are calls, not actions");
  c.clearActions();
  assert.deepEqual([c.actions, c.calls], [[], []]);
});

test("cluster-scoped resources have no namespace", async () => {
  const c = fake();
  const n = await c.create(namespaces, { metadata: { name: "team-a", namespace: "ignored" } });
  assert.equal(n.metadata.namespace, undefined);
  assert.ok(await c.get(namespaces, undefined, "team-a"));
  assert.equal(c.actions[0]?.namespace, "");
});

test("list: namespace, label selectors (=, !=, in, notin, exists), field selectors, paging", async () => {
  const c = fake();
  c.seed(
    widgets,
    widget("a", { metadata: { name: "a", namespace: "ns", labels: { type: "git", tier: "x" } } }),
    widget("b", { metadata: { name: "b", namespace: "ns", labels: { type: "hub" } } }),
    widget("c", { metadata: { name: "c", namespace: "other", labels: { type: "bundles" } } }),
  );
  c.seed(configMaps, { metadata: { name: "cm", namespace: "ns", labels: { type: "git" } } });
  const names = async (ns: string | undefined, labelSelector?: string, fieldSelector?: string) =>
    (await c.list(widgets, ns, { labelSelector, fieldSelector })).items.map((i) => i.metadata.name);
  assert.deepEqual(await names(undefined), ["a", "b", "c"]);
  assert.deepEqual(await names("ns"), ["a", "b"]);
  assert.deepEqual(await names(undefined, "type=git"), ["a"]);
  assert.deepEqual(await names(undefined, "type==git,tier=x"), ["a"]);
  assert.deepEqual(await names(undefined, "type!=git"), ["b", "c"]);
  assert.deepEqual(await names(undefined, "type in (git, bundles)"), ["a", "c"]);
  assert.deepEqual(await names(undefined, "type notin (git,bundles)"), ["b"]);
  assert.deepEqual(await names(undefined, "tier"), ["a"]);
  assert.deepEqual(await names(undefined, "!tier"), ["b", "c"]);
  assert.deepEqual(await names(undefined, undefined, "metadata.name=b"), ["b"]);
  assert.deepEqual(await names(undefined, undefined, "metadata.namespace!=ns"), ["c"]);
  await rejects(c.list(widgets, undefined, { labelSelector: "a>1" }), 400);
  const page1 = await c.list(widgets, undefined, { limit: 2 });
  assert.equal(page1.items.length, 2);
  const page2 = await c.list(widgets, undefined, { limit: 2, continue: page1.metadata.continue });
  assert.deepEqual(
    page2.items.map((i) => i.metadata.name),
    ["c"],
  );
  assert.equal(page2.metadata.continue, undefined);
});

test("delete with finalizers marks deletionTimestamp; removing the last finalizer deletes", async () => {
  const c = fake();
  c.seed(widgets, widget("a", { metadata: { name: "a", namespace: "ns", finalizers: ["x"] } }));
  await c.delete(widgets, "ns", "a");
  assert.equal(c.object(widgets, "ns", "a")?.metadata.deletionTimestamp, "2026-01-01T00:00:00Z");
  await c.mergePatch(widgets, "ns", "a", { metadata: { finalizers: null } });
  assert.equal(c.object(widgets, "ns", "a"), undefined);
});

test("failNext fails one matching call; lockedMergePatch retries the injected conflict", async () => {
  const c = fake();
  const [a] = c.seed(widgets, widget("a"));
  c.failNext("patch", 409, { name: "a", subresource: "status" });
  const out = await lockedMergePatch(c, widgets, a!, () => ({ status: { done: true } }), {
    subresource: "status",
  });
  assert.deepEqual(out?.status, { done: true });
  const rv = a!.metadata.resourceVersion;
  assert.deepEqual(
    c.writes("patch").map((x) => [x.body, x.error]),
    [
      [{ status: { done: true }, metadata: { resourceVersion: rv } }, 409],
      [{ status: { done: true }, metadata: { resourceVersion: rv } }, undefined],
    ],
  );
  assert.deepEqual(
    c.calls.map((x) => x.verb),
    ["patch", "get", "patch"],
  );
});

test("a reactor sees every call: it can change the world first (a real conflict), answer, or fail", async () => {
  const c = fake();
  const [a] = c.seed(widgets, widget("a"));
  let raced = false;
  c.react((call) => {
    if (call.verb === "patch" && !raced) {
      raced = true;
      c.seed(widgets, widget("a", { spec: { size: 42 } })); // another writer got there first
    }
    return undefined;
  });
  const seen: number[] = [];
  const out = await lockedMergePatch<Widget>(c, widgets, a!, (latest) => {
    seen.push(latest.spec?.size as number);
    return { spec: { size: (latest.spec?.size as number) + 1 } };
  });
  assert.deepEqual(seen, [1, 42], "recomputed from the object the other writer left");
  assert.deepEqual(out?.spec, { size: 43 });

  const stop = c.react((call) =>
    call.verb === "request" && call.resource === "/apis/example.dev/v1" ? { resources: [] } : undefined,
  );
  assert.deepEqual(await c.request("GET", "/apis/example.dev/v1"), { resources: [] });
  stop();
  await assert.rejects(c.request("GET", "/apis/example.dev/v1"), /no reactor answers/);
  c.react(() => {
    throw new Error("connection reset");
  });
  await assert.rejects(c.create(widgets, widget("z")), /connection reset/);
  assert.equal(c.actions.at(-1)?.error, 0);
});

test("watch replays from a resourceVersion, follows a label selector, and ends on close or abort", async () => {
  const c = fake();
  const [a] = c.seed(widgets, widget("a", { metadata: { name: "a", namespace: "ns", labels: { t: "x" } } }));
  const abort = new AbortController();
  const events: string[] = [];
  const stream = c.watch<Widget>(
    widgets,
    "ns",
    { resourceVersion: a!.metadata.resourceVersion, labelSelector: "t=x" },
    abort.signal,
  );
  const done = (async () => {
    for await (const e of stream) events.push(`${e.type} ${e.object.metadata.name}`);
  })();
  await c.create(widgets, widget("b")); // no label: unseen
  await c.mergePatch(widgets, "ns", "b", { metadata: { labels: { t: "x" } } }); // enters the selector
  await c.mergePatch(widgets, "ns", "a", { spec: { size: 2 } });
  await c.mergePatch(widgets, "ns", "a", { metadata: { labels: { t: "y" } } }); // leaves it
  await c.delete(widgets, "ns", "b");
  await c.create(configMaps, { metadata: { name: "cm", namespace: "ns", labels: { t: "x" } } });
  await new Promise((r) => setImmediate(r));
  abort.abort();
  await done;
  assert.deepEqual(events, ["ADDED b", "MODIFIED a", "DELETED a", "DELETED b"]);

  const fromNow: string[] = [];
  const watching = (async () => {
    for await (const e of c.watch<Widget>(widgets, undefined, {}, new AbortController().signal))
      fromNow.push(`${e.type} ${e.object.metadata.name}`);
  })();
  await new Promise((r) => setImmediate(r));
  c.closeWatches();
  await watching;
  assert.deepEqual(fromNow, ["ADDED a"], "no resourceVersion: current state as ADDED");
});

test("an Informer syncs from the fake and sees later writes", async () => {
  const c = fake();
  c.seed(widgets, widget("a"));
  const log = createLogger({ service: "test", level: "silent" });
  const inf = new Informer<Widget>(c, widgets, { log, resyncMs: 0 });
  const seen: string[] = [];
  inf.on({
    onAdd: (o) => seen.push(`add ${o.metadata.name}`),
    onUpdate: (_o, n) => seen.push(`update ${n.metadata.name}`),
  });
  inf.start();
  await inf.waitForSync();
  await c.create(widgets, widget("b"));
  await c.mergePatch(widgets, "ns", "a", { status: { ok: true } }, "status");
  await new Promise((r) => setImmediate(r));
  await inf.stop();
  assert.deepEqual(seen, ["add a", "add b", "update a"]);
  assert.deepEqual(inf.getByKey("ns/a")?.status, { ok: true });
});

test("ApiError from the fake carries status and reason like the REST client's", async () => {
  const c = fake();
  c.failNext("get", 503);
  const err = await rejects(c.get(widgets, "ns", "a"), 503, "ServiceUnavailable");
  assert.ok(err instanceof ApiError);
});
