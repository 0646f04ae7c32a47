// Child wake-ups, with real informers fed by the fake apiserver: which events
// enqueue which request, what ctx.children reads, and a slow resolver driven
// to its answer by its child alone (no worker ever waits).
import assert from "node:assert/strict";
import { test } from "node:test";
import { type OwnerReference, type ResolutionRequest, resolutionRequests } from "@quarry/api";
import {
  type ConfigMapObject,
  Controller,
  configMaps,
  Informer,
  isApiError,
  type KubeObject,
  type ResourceType,
  secrets,
  WorkQueue,
} from "@quarry/kube";
import { FakeClock, FakeEventRecorder, FakeKubeClient } from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { ChildCaches } from "./children.ts";
import { defaultRuntimeConfig } from "./config.ts";
import { ResolverReconciler } from "./reconciler.ts";
import { type JobResolver, pending } from "./resolver.ts";
import { wakeUps } from "./run.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: t\n";
const LABEL = "example.dev/slow";

const request = (name: string): ResolutionRequest => ({
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: { name, namespace: "ns", labels: { "resolution.tekton.dev/type": "slow" } },
  spec: { params: [] },
});

const ownerOf = (rr: ResolutionRequest, controller = true): OwnerReference => ({
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  name: rr.metadata.name ?? "",
  uid: rr.metadata.uid ?? "",
  controller,
});

const cm = (
  name: string,
  owners: OwnerReference[],
  labels: Record<string, string> = { [LABEL]: "true" },
): ConfigMapObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", labels, ownerReferences: owners },
});

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Informers on the fake apiserver, wired as runResolver wires them. */
function wire(
  client: FakeKubeClient,
  resolver: JobResolver,
  queue: WorkQueue,
  opts: { workers?: boolean } = {},
) {
  const informers: Informer<KubeObject>[] = [];
  const informer = <T extends KubeObject>(rt: ResourceType, sel: { labelSelector?: string } = {}) => {
    const inf = new Informer<T>(client, rt, { ...sel, log, resyncMs: 0 });
    informers.push(inf as unknown as Informer<KubeObject>);
    return inf;
  };
  const requests = informer<ResolutionRequest>(resolutionRequests, {
    labelSelector: "resolution.tekton.dev/type in (slow)",
  });
  const children = new ChildCaches(resolver.watches, informer);
  const reconciler = new ResolverReconciler({
    resolver,
    client,
    requests,
    children,
    config: () => ({ runtime: defaultRuntimeConfig, raw: {} }),
    recorder: new FakeEventRecorder(),
    metrics: { duration: () => {}, cache: () => {}, inflight: () => {}, failure: () => {} },
    log,
    stopping: new AbortController().signal,
  });
  const controller = new Controller({ name: "slow-resolver", reconciler, log, queue, concurrency: 2 });
  wakeUps(requests, children, controller, reconciler);
  return {
    requests,
    children,
    async start() {
      for (const i of informers) i.start();
      await Promise.all(informers.map((i) => i.waitForSync()));
      if (opts.workers) controller.start();
    },
    async stop() {
      await controller.stop();
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}

/** Takes every queued key (the fake's watch events are delivered once the loop turns). */
async function drain(queue: WorkQueue): Promise<string[]> {
  await new Promise((r) => setImmediate(r));
  const keys: string[] = [];
  while (queue.depth() > 0) {
    const key = await queue.get();
    if (key === undefined) break;
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

const watching: JobResolver = {
  type: "slow",
  paramsSchema: { type: "object" },
  watches: [{ resource: configMaps, labelSelector: `${LABEL}=true` }],
  resolve: async () => pending(),
};

test("an event on a child enqueues the request controlling it; status-only request updates do not", async (t) => {
  const client = new FakeKubeClient();
  const [r, other] = client.seed(resolutionRequests, request("r"), request("other"));
  const queue = new WorkQueue();
  const w = wire(client, watching, queue);
  t.after(() => w.stop());
  await w.start();
  assert.deepEqual((await drain(queue)).sort(), ["ns/other", "ns/r"], "the initial list");

  // the lifecycle controller's (or our own) status write: no wake-up
  await client.mergePatch(resolutionRequests, "ns", "r", { status: { annotations: { a: "b" } } }, "status");
  await until("the status write", () => w.requests.getByKey("ns/r")?.status?.annotations?.a === "b");
  assert.deepEqual(await drain(queue), []);

  // a child appears, changes, goes: each wakes its request
  await client.create(configMaps, cm("r-work", [ownerOf(r!)]));
  assert.deepEqual(await drain(queue), ["ns/r"]);
  assert.deepEqual(
    w.children.owned(configMaps, r!.metadata.uid).map((o) => o.metadata.name),
    ["r-work"],
  );
  assert.deepEqual(w.children.owned(configMaps, other!.metadata.uid), []);
  await client.mergePatch(configMaps, "ns", "r-work", { data: { result: "x" } });
  assert.deepEqual(await drain(queue), ["ns/r"]);

  // not a controller reference, not a request, not selected: nobody wakes (the last create is the
  // marker: events arrive in order, so once it is queued the others were seen)
  await client.create(configMaps, cm("loose", [ownerOf(r!, false)]));
  await client.create(
    configMaps,
    cm("foreign", [{ ...ownerOf(r!), kind: "Pipe", apiVersion: "quarry.dev/v1", uid: "uid-pipe" }]),
  );
  await client.create(configMaps, cm("unlabelled", [ownerOf(r!)], {}));
  await client.create(configMaps, cm("other-work", [ownerOf(other!)]));
  assert.deepEqual(await drain(queue), ["ns/other"]);
  assert.deepEqual(
    w.children.owned(configMaps, r!.metadata.uid).map((o) => o.metadata.name),
    ["loose", "r-work"],
    "ctx.children lists every cached object carrying the uid, by name",
  );

  await client.delete(configMaps, "ns", "r-work");
  assert.deepEqual(await drain(queue), ["ns/r"]);
  assert.throws(() => w.children.owned(secrets, r!.metadata.uid), /does not watch secrets; declare it/);
});

test("a slow resolver: a child created on the first step, an answer once the child says so, no worker held", async (t) => {
  const client = new FakeKubeClient();
  client.seed(resolutionRequests, request("r"));
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock });
  const seen: string[] = [];
  const resolver: JobResolver = {
    ...watching,
    async resolve(_params, ctx) {
      const [work] = ctx.children<ConfigMapObject>(configMaps);
      seen.push(`attempt ${ctx.attempt}: ${work ? (work.data?.result ?? "waiting") : "none"}`);
      if (!work) {
        const child = cm(`${ctx.name}-work`, [ctx.ownerReference]);
        // the cache may lag behind our own create: a deterministic name makes the step idempotent
        await ctx.client.create(configMaps, child).catch((err: unknown) => {
          if (!isApiError(err, 409)) throw err;
        });
        return pending({ message: "work created", wakeAfterMs: 60_000 });
      }
      if (work.data?.result === undefined) return pending({ message: "waiting for the result" });
      return { data: new TextEncoder().encode(work.data.result) };
    },
  };
  const w = wire(client, resolver, queue, { workers: true });
  t.after(() => w.stop());
  await w.start();
  const rr = () => client.object<ResolutionRequest>(resolutionRequests, "ns", "r");

  await until("the child", () => w.children.owned(configMaps, rr()?.metadata.uid).length === 1);
  await until("the step its creation woke", () => seen.length === 2 && queue.processingCount() === 0);
  assert.equal(queue.numRequeues("ns/r"), 0, "a Pending is not a failure");
  assert.equal(queue.delayedCount(), 1, "the first step asked to be woken after 60 s");
  assert.equal(queue.processingCount(), 0, "no worker waits for the child");

  // the work finishes (a pod writing its result): its event alone brings the answer
  await client.mergePatch(configMaps, "ns", "r-work", { data: { result: TASK } });
  await until("the answer, in the cache", () => w.requests.getByKey("ns/r")?.status?.data !== undefined);
  assert.equal(Buffer.from(rr()?.status?.data ?? "", "base64").toString(), TASK);

  // the timed wake-up still fires and finds nothing to do
  clock.advance(60_000);
  await until("the timed step", () => queue.processingCount() === 0 && queue.depth() === 0);

  assert.deepEqual(seen, ["attempt 1: none", "attempt 1: waiting", `attempt 1: ${TASK}`]);
  // a step may read the request before its informer saw the stamp: that write is refused (409) and
  // recomputed to nothing, so only the writes that landed are compared
  assert.deepEqual(
    client.actions
      .filter((a) => a.error === undefined)
      .map((a) => `${a.verb} ${a.resource}/${a.name}${a.subresource ? `/${a.subresource}` : ""}`),
    [
      "create configmaps/r-work",
      "patch resolutionrequests/r/status", // accepted-by, once
      "patch configmaps/r-work", // the test, as the work
      "patch resolutionrequests/r/status", // the answer
    ],
  );
  const created = client.actions[0]?.body as ConfigMapObject;
  assert.deepEqual(created.metadata.ownerReferences, [
    {
      apiVersion: "resolution.tekton.dev/v1beta1",
      kind: "ResolutionRequest",
      name: "r",
      uid: rr()?.metadata.uid,
      controller: true,
    },
  ]);
});

test("a resource watched twice is refused at wiring", () => {
  const twice: JobResolver = { ...watching, watches: [{ resource: configMaps }, { resource: configMaps }] };
  assert.throws(
    () => new ChildCaches(twice.watches, () => new Informer(new FakeKubeClient(), configMaps, { log })),
    /watches configmaps twice/,
  );
});

test("a perNamespace watch: an informer per request namespace, made on first read; a refused list (403) is made again later", async (t) => {
  const client = new FakeKubeClient();
  const owner = ownerOf({ ...request("r"), metadata: { ...request("r").metadata, uid: "uid-r" } });
  const inNs = (ns: string, name: string) => ({
    ...cm(name, [owner]),
    metadata: { ...cm(name, [owner]).metadata, namespace: ns },
  });
  client.seed(configMaps, inNs("a", "in-a"), inNs("b", "in-b"), inNs("c", "in-c"));
  const made: string[] = [];
  const informers: Informer<KubeObject>[] = [];
  const children = new ChildCaches(
    [{ resource: configMaps, labelSelector: `${LABEL}=true`, perNamespace: true }],
    () => assert.fail("a perNamespace watch makes no shared informer"),
    (rt, opts) => {
      made.push(opts.namespace);
      const inf = new Informer<KubeObject>(client, rt, {
        ...opts,
        log,
        resyncMs: 0,
        stopOn: (err) => isApiError(err, 403),
      });
      informers.push(inf);
      return inf;
    },
  );
  t.after(() => children.stop());
  const woken: string[] = [];
  children.wake({
    ownerHandlers: () => ({ onAdd: (o: KubeObject) => woken.push(o.metadata.name ?? "") }),
  } as unknown as Pick<Controller, "ownerHandlers">);
  const names = (ns: string) => children.owned(configMaps, "uid-r", ns).map((o) => o.metadata.name);

  assert.deepEqual(names("a"), [], "the first read starts the informer and finds nothing yet");
  await until("namespace a listed", () => names("a").length === 1);
  assert.deepEqual(names("a"), ["in-a"], "only its own namespace");
  assert.deepEqual(woken, ["in-a"], "what the list finds wakes its owner");
  assert.deepEqual(children.owned(configMaps, undefined, "a"), []);

  // a namespace that did not opt in: the list is refused, the informer stops, nothing is cached
  client.failNext("list", 403, { resource: "configmaps" });
  assert.deepEqual(names("b"), []);
  await until("the refused informer stopped", () => informers[1]?.isRunning() === false);
  assert.deepEqual(made, ["a", "b"]);
  // it opted in since: the next read makes a new informer
  assert.deepEqual(names("b"), []);
  await until("namespace b listed", () => names("b").length === 1);
  assert.deepEqual(made, ["a", "b", "b"]);
  assert.deepEqual(
    client.calls.filter((c) => c.verb === "list").map((c) => c.namespace),
    ["a", "b", "b"],
    "never a cluster-wide list",
  );
  assert.equal(names("c").length, 0);

  await children.stop();
  assert.ok(
    informers.every((i) => !i.isRunning()),
    "stopped with the caches",
  );
  assert.deepEqual(names("d"), [], "no new informer once stopped");
  assert.deepEqual(made, ["a", "b", "b", "c"]);
});
