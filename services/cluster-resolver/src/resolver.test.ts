import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import type { Informer, KubeObject } from "@quarry/kube";
import { ParamsValidator, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import { decideResolution, parseResolverConfig } from "@quarry/resolver-sdk/internal";
import { validateParams } from "./generated/params-validator.js";
import { clusterParamsSchema } from "./params.ts";
import { ClusterResolver, type ServedKind } from "./resolver.ts";

const task = (ns: string, name: string): KubeObject => ({
  apiVersion: "tekton.dev/v1",
  kind: "Task",
  metadata: { name, namespace: ns, uid: "u1" },
});

function served(cached: KubeObject[], api: KubeObject[]): ServedKind & { reads: number } {
  const s = {
    reads: 0,
    apiVersion: "tekton.dev/v1",
    plural: "tasks",
    informer: {
      get: (ns: string | undefined, name: string) =>
        cached.find((o) => o.metadata.namespace === ns && o.metadata.name === name),
    } as unknown as Informer<KubeObject>,
    read: async (ns: string, name: string) => {
      s.reads++;
      return api.find((o) => o.metadata.namespace === ns && o.metadata.name === name);
    },
  };
  return s;
}

const ctx = (config: Record<string, string> = {}) =>
  ({ namespace: "ns", name: "r", signal: new AbortController().signal, config }) as unknown as ResolveContext;

test("a cache hit makes no API call", async () => {
  const kind = served([task("ns", "t")], []);
  const r = await new ClusterResolver({ task: kind }).resolve({ name: "t" }, ctx());
  assert.match(Buffer.from(r.data).toString(), /kind: Task/);
  assert.equal(kind.reads, 0);
  assert.equal(r.refSource?.uri, "/apis/tekton.dev/v1/namespaces/ns/task/t@u1");
});

test("a miss asks the API once: an object created just before the request is found", async () => {
  const kind = served([], [task("ns", "new")]);
  const r = await new ClusterResolver({ task: kind }).resolve({ name: "new" }, ctx());
  assert.equal(r.annotations?.["resolution.tekton.dev/name"], "new");
  assert.equal(kind.reads, 1);
  await assert.rejects(
    new ClusterResolver({ task: kind }).resolve({ name: "gone" }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "NotFound",
  );
});

test("policy is checked before any lookup; unserved kinds are UnsupportedKind", async () => {
  const kind = served([task("other", "t")], []);
  const resolver = new ClusterResolver({ task: kind });
  await assert.rejects(
    resolver.resolve({ name: "t", namespace: "other" }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "Forbidden",
  );
  assert.equal(kind.reads, 0);
  await assert.rejects(
    resolver.resolve({ name: "t", kind: "pipeline" }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "UnsupportedKind",
  );
});

test("a refusal carries Tekton's condition message; an empty kind or namespace param is unset", async () => {
  const resolver = new ClusterResolver({ task: served([task("ns", "t"), task("shared", "t")], []) });
  await assert.rejects(
    resolver.resolve({ name: "t", namespace: "shared" }, ctx({ "blocked-namespaces": "*" })),
    (e) =>
      e instanceof ResolutionError &&
      e.message === 'invalid resource request "ns/r": only explicit allowed access to namespaces is allowed',
  );
  const r = await resolver.resolve({ name: "t", kind: "", namespace: "" }, ctx());
  assert.equal(r.annotations?.["resolution.tekton.dev/namespace"], "ns");
  assert.equal(
    new ParamsValidator(clusterParamsSchema, validateParams).check({ name: "t", kind: "", namespace: "" }),
    undefined,
  );
});

test("the params schema refuses names that are not object names (they go into an API path)", () => {
  const v = new ParamsValidator(clusterParamsSchema, validateParams);
  assert.match(v.check({ name: "../../secrets/x" }) ?? "", /param "name" must match pattern/);
  assert.match(
    v.check({ name: "t", namespace: "../kube-system" }) ?? "",
    /param "namespace" must match pattern/,
  );
  assert.match(v.check({ name: "a".repeat(254) }) ?? "", /param "name" must NOT have more than 253/);
  assert.equal(v.check({ name: "build.v1", namespace: "team-a" }), undefined);
});

/** The runtime's decision for a request named `name` with `params` under the ConfigMap `data`. */
function decide(data: Record<string, string>, params: Record<string, string>, name = "rr") {
  const resolver = new ClusterResolver({ task: served([], []) });
  const rr: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name, namespace: "ns" },
    spec: { params: Object.entries(params).map(([name, value]) => ({ name, value })) },
  };
  const validator = new ParamsValidator(resolver.paramsSchema, resolver.compiledParams);
  const decision = decideResolution(rr, resolver, validator, parseResolverConfig(data, resolver));
  assert.equal(decision.kind, "resolve", JSON.stringify(decision));
  return decision as Extract<typeof decision, { kind: "resolve" }>;
}

test("default-cache-mode: without a cache param, always caches; auto (no reference is immutable) and never do not", () => {
  const params = { kind: "task", name: "t", namespace: "ns" };
  const rows: [string, Record<string, string>, Record<string, string>, boolean][] = [
    ["always", { "default-cache-mode": "always" }, params, true],
    [
      "always, with the namespace policy keys",
      { "default-cache-mode": "always", "allowed-namespaces": "ns" },
      params,
      true,
    ],
    ["auto", { "default-cache-mode": "auto" }, params, false],
    ["unset (auto)", {}, params, false],
    ["never", { "default-cache-mode": "never" }, params, false],
    [
      "never, but the request's cache param says always",
      { "default-cache-mode": "never" },
      { ...params, cache: "always" },
      true,
    ],
  ];
  for (const [what, data, p, want] of rows) assert.equal(decide(data, p).useCache, want, what);
  // the identical second request looks up the first one's entry
  const always = { "default-cache-mode": "always" };
  assert.equal(decide(always, params, "a").cacheKey, decide(always, params, "b").cacheKey);
});
