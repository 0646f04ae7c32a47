// Table tests of ResolverReconciler's writes (knative style): given these
// requests in the cache and the apiserver and a stub resolver, exactly these
// patches, Events and errors come out.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { test } from "node:test";
import {
  ANNOTATION_ACCEPTED_BY,
  type Condition,
  type Param,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import { MapLister, type ReconcileOutcome, TransientError } from "@quarry/kube";
import {
  type FakeAction,
  FakeEventRecorder,
  FakeKubeClient,
  type RecordedEvent,
  reconcileContext,
} from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { defaultRuntimeConfig, parseResolverConfig, type RuntimeConfig } from "./config.ts";
import { notFound } from "./errors.ts";
import type { ResolverMetrics } from "./metrics.ts";
import { ResolverReconciler } from "./reconciler.ts";
import {
  type Params,
  type Pending,
  pending,
  type ResolveContext,
  type Resolved,
  type Resolver,
} from "./resolver.ts";

const log = createLogger({ service: "test", level: "silent" });
const NOW = Date.parse("2026-01-01T00:00:05Z");
const NOW_RFC3339 = "2026-01-01T00:00:05Z";
const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: t\n";
const TASK_B64 = Buffer.from(TASK).toString("base64");
const REF = { uri: "https://example.dev/task.yaml", digest: { sha256: "ab".repeat(32) } };
const IDENTITY = `git-resolver/${hostname()}`;

const inProgress: Condition = {
  type: "Succeeded",
  status: "Unknown",
  reason: "ResolutionInProgress",
  message: "waiting for resolver",
  lastTransitionTime: "2026-01-01T00:00:00Z",
};

function request(
  name: string,
  params: Param[] = [{ name: "url", value: REF.uri }],
  status: ResolutionRequest["status"] = { conditions: [inProgress] },
): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name, namespace: "ns", labels: { "resolution.tekton.dev/type": "git" } },
    spec: { params },
    status,
  };
}

const ANSWER: Resolved = {
  data: new TextEncoder().encode(TASK),
  annotations: { "example.dev/commit": "abc" },
  refSource: REF,
};
const ok = async (): Promise<Resolved> => ANSWER;

function statusPatch(name: string, rv: string, status: Record<string, unknown>, error?: number): FakeAction {
  const action: FakeAction = {
    verb: "patch",
    resource: "resolutionrequests",
    namespace: "ns",
    name,
    subresource: "status",
    body: { status, metadata: { resourceVersion: rv } },
  };
  if (error !== undefined) action.error = error;
  return action;
}

// every write records the generation it was computed from (the fake apiserver's objects are at 1)
const success = (extra: Record<string, string> = {}) => ({
  observedGeneration: 1,
  data: TASK_B64,
  annotations: {
    "resolution.tekton.dev/content-type": "application/x-yaml",
    "example.dev/commit": "abc",
    ...extra,
  },
  refSource: REF,
  source: REF,
});

const failure = (reason: string, message: string) => ({
  observedGeneration: 1,
  conditions: [
    {
      type: "Succeeded",
      status: "False",
      reason: "ResolutionFailed",
      message,
      lastTransitionTime: NOW_RFC3339,
    },
  ],
  annotations: { "quarry.dev/reason": reason },
});

const stamp = (name: string, rv: string) =>
  statusPatch(name, rv, { annotations: { [ANNOTATION_ACCEPTED_BY]: IDENTITY } });

/** A resolver answering with `outcomes` in turn (the last one repeats); a function outcome is thrown. */
function steps(...outcomes: (Pending | Resolved | (() => never))[]) {
  let i = 0;
  return async (): Promise<Resolved | Pending> => {
    const next = outcomes[Math.min(i++, outcomes.length - 1)]!;
    return typeof next === "function" ? next() : next;
  };
}

const cacheAnnotations = (operation: "store" | "retrieve") => ({
  "resolution.tekton.dev/cached": "true",
  "resolution.tekton.dev/cache-operation": operation,
  "resolution.tekton.dev/cache-resolver-type": "git",
  "resolution.tekton.dev/cache-timestamp": new Date(NOW).toISOString(),
});

interface Row {
  name: string;
  /** Seeded in order (resourceVersions "1", "2", …) and cached. */
  given: ResolutionRequest[];
  resolve?: (params: Params, ctx: ResolveContext) => Promise<Resolved | Pending>;
  /**
   * Reconciles in order; the default is one first attempt of "ns/r". Before each, the lister is
   * refreshed from the fake apiserver (an informer that caught up between reconciles).
   */
  runs?: { key: string; attempt: number }[];
  runtime?: Partial<RuntimeConfig>;
  /** The resolver's ConfigMap as an operator writes it; when set, the runtime config is parsed from it. */
  configData?: Record<string, string>;
  /** The stub resolver's isImmutable (default: none, so every reference is mutable). */
  immutable?: (params: Params) => boolean;
  arrange?: (client: FakeKubeClient) => void;
  /** Runs inside each resolve call, before the stub answers (another writer, an informer catching up). */
  whileResolving?: (client: FakeKubeClient, requests: MapLister<ResolutionRequest>) => void;
  wantActions: FakeAction[];
  wantEvents?: RecordedEvent[];
  wantResolveCalls: number;
  /** What each run returned, for the runs that did not throw; default: undefined for every one. */
  wantResults?: (ReconcileOutcome | undefined)[];
  /** ctx.attempt of each resolve call, when the row checks it. */
  wantAttempts?: number[];
  /** The last run throws this. */
  wantError?: { message: RegExp; retryAfterMs: number | undefined };
  wantCacheMetrics?: string[];
}

const rows: Row[] = [
  {
    name: "success writes exactly data, annotations and refSource/source under the resourceVersion read",
    given: [request("r")],
    wantActions: [statusPatch("r", "1", success())],
    wantResolveCalls: 1,
    wantCacheMetrics: ["bypass"],
  },
  {
    name: "a ResolutionError fails the request with its reason and a Warning Event",
    given: [request("r")],
    resolve: async () => {
      throw notFound("no such file");
    },
    wantActions: [statusPatch("r", "1", failure("NotFound", "no such file"))],
    wantEvents: [{ object: "ns/r", type: "Warning", reason: "NotFound", message: "no such file" }],
    wantResolveCalls: 1,
  },
  {
    name: "writes on uninitialised requests record the generation they saw: knative reconcilers (Tekton's) reset a lagging one",
    given: [
      {
        ...request("f", [{ name: "url", value: "https://example.dev/missing.yaml" }], {}),
        metadata: { ...request("f").metadata, generation: 3 },
      },
      { ...request("s", undefined, {}), metadata: { ...request("s").metadata, generation: 3 } },
    ],
    resolve: async (params) => {
      if (String(params.url).endsWith("missing.yaml")) throw notFound("no such file");
      return ANSWER;
    },
    runs: [
      { key: "ns/f", attempt: 1 },
      { key: "ns/s", attempt: 1 },
    ],
    wantActions: [
      statusPatch("f", "1", { ...failure("NotFound", "no such file"), observedGeneration: 3 }),
      statusPatch("s", "2", { ...success(), observedGeneration: 3 }),
    ],
    wantEvents: [{ object: "ns/f", type: "Warning", reason: "NotFound", message: "no such file" }],
    wantResolveCalls: 2,
  },
  {
    name: "invalid params fail without calling the resolver",
    given: [request("r", [{ name: "nope", value: "x" }])],
    wantActions: [statusPatch("r", "1", failure("InvalidParams", 'param "nope" is not supported'))],
    wantEvents: [
      { object: "ns/r", type: "Warning", reason: "InvalidParams", message: 'param "nope" is not supported' },
    ],
    wantResolveCalls: 0,
  },
  {
    name: "a transient error below max attempts writes nothing and throws TransientError with the Retry-After",
    given: [request("r")],
    resolve: async () => {
      throw Object.assign(new Error("registry says 429"), { retryAfterMs: 3000 });
    },
    runs: [{ key: "ns/r", attempt: 4 }],
    wantActions: [],
    wantResolveCalls: 1,
    wantError: { message: /^attempt 4 failed: registry says 429$/, retryAfterMs: 3000 },
  },
  {
    name: "the last attempt's transient error becomes SourceUnavailable",
    given: [request("r")],
    resolve: async () => {
      throw new Error("connection refused");
    },
    runs: [{ key: "ns/r", attempt: 5 }],
    wantActions: [
      statusPatch(
        "r",
        "1",
        failure(
          "SourceUnavailable",
          "git resolver gave up after 5 attempts; attempt 5 failed: connection refused",
        ),
      ),
    ],
    wantEvents: [
      {
        object: "ns/r",
        type: "Warning",
        reason: "SourceUnavailable",
        message: "git resolver gave up after 5 attempts; attempt 5 failed: connection refused",
      },
    ],
    wantResolveCalls: 1,
  },
  {
    name: "done and resolved requests are never written nor resolved",
    given: [
      request("done", undefined, {
        conditions: [{ ...inProgress, status: "True", reason: "" }],
        data: "eA==",
      }),
      request("resolved", undefined, { conditions: [inProgress], data: "eA==" }),
    ],
    runs: [
      { key: "ns/done", attempt: 1 },
      { key: "ns/resolved", attempt: 1 },
    ],
    wantActions: [],
    wantResolveCalls: 0,
  },
  {
    name: "a cache hit writes the stored result without calling the resolver",
    given: [
      request("a", [
        { name: "url", value: REF.uri },
        { name: "cache", value: "always" },
      ]),
      request("b", [
        { name: "url", value: REF.uri },
        { name: "cache", value: "always" },
      ]),
    ],
    runs: [
      { key: "ns/a", attempt: 1 },
      { key: "ns/b", attempt: 1 },
    ],
    wantActions: [
      statusPatch("a", "1", success(cacheAnnotations("store"))),
      statusPatch("b", "2", success(cacheAnnotations("retrieve"))),
    ],
    wantResolveCalls: 1,
    wantCacheMetrics: ["miss", "hit"],
  },
  {
    name: "a 409 (the lifecycle controller wrote meanwhile) recomputes from the re-read request",
    given: [request("r", undefined, {})],
    arrange: (client) => {
      let raced = false;
      client.react((call) => {
        if (raced || call.verb !== "patch") return undefined;
        raced = true;
        const latest = client.object<ResolutionRequest>(resolutionRequests, "ns", "r")!;
        client.seed(resolutionRequests, { ...latest, status: { conditions: [inProgress] } });
        return undefined;
      });
    },
    wantActions: [statusPatch("r", "1", success(), 409), statusPatch("r", "2", success())],
    wantResolveCalls: 1,
  },
  {
    name: "a 409 because the request timed out meanwhile: recomputed to no write",
    given: [request("r")],
    arrange: (client) => {
      let raced = false;
      client.react((call) => {
        if (raced || call.verb !== "patch") return undefined;
        raced = true;
        const latest = client.object<ResolutionRequest>(resolutionRequests, "ns", "r")!;
        const timedOut: Condition = { ...inProgress, status: "False", reason: "ResolutionTimedOut" };
        client.seed(resolutionRequests, { ...latest, status: { conditions: [timedOut] } });
        return undefined;
      });
    },
    wantActions: [statusPatch("r", "1", success(), 409)],
    wantResolveCalls: 1,
  },
  {
    name: "a retry stamps accepted-by at once; the data write starts from the stamped object (no 409)",
    given: [request("r")],
    resolve: async () => {
      await new Promise((r) => setTimeout(r, 20));
      return ok();
    },
    runs: [{ key: "ns/r", attempt: 2 }],
    wantActions: [
      statusPatch("r", "1", { annotations: { [ANNOTATION_ACCEPTED_BY]: IDENTITY } }),
      statusPatch("r", "2", success()),
    ],
    wantResolveCalls: 1,
  },
  {
    name: "initialised while it resolved, and the informer saw it: the data write starts from that copy (no 409)",
    given: [request("r", undefined, {})],
    whileResolving: (client, requests) => {
      const latest = client.object<ResolutionRequest>(resolutionRequests, "ns", "r");
      if (latest)
        requests.set(
          client.seed(resolutionRequests, { ...latest, status: { conditions: [inProgress] } })[0]!,
        );
    },
    wantActions: [statusPatch("r", "2", success())],
    wantResolveCalls: 1,
  },
  {
    name: "initialised while it resolved, the informer not yet: the data write meets a 409 and recomputes",
    given: [request("r", undefined, {})],
    whileResolving: (client) => {
      const latest = client.object<ResolutionRequest>(resolutionRequests, "ns", "r");
      if (latest) client.seed(resolutionRequests, { ...latest, status: { conditions: [inProgress] } });
    },
    wantActions: [statusPatch("r", "1", success(), 409), statusPatch("r", "2", success())],
    wantResolveCalls: 1,
  },
  {
    name: "Pending: no data, no failure, no retry; the one-time accepted-by stamp; requeued after wakeAfterMs",
    given: [request("r")],
    resolve: steps(pending({ message: "waiting for pod", wakeAfterMs: 2000 })),
    runs: [{ key: "ns/r", attempt: 3 }],
    wantActions: [stamp("r", "1")],
    wantResults: [{ requeueAfterMs: 2000 }],
    wantAttempts: [3],
    wantResolveCalls: 1,
  },
  {
    name: "Pending on a request already stamped writes nothing; without wakeAfterMs it is not requeued",
    given: [
      request("r", undefined, { conditions: [inProgress], annotations: { [ANNOTATION_ACCEPTED_BY]: "x" } }),
    ],
    resolve: steps(pending()),
    runs: [
      { key: "ns/r", attempt: 1 },
      { key: "ns/r", attempt: 1 },
    ],
    wantActions: [],
    wantResults: [undefined, undefined],
    wantResolveCalls: 2,
  },
  {
    name: "Pending, then Resolved on the next reconcile: the normal success write",
    given: [request("r")],
    resolve: steps(pending({ wakeAfterMs: 500 }), ANSWER),
    runs: [
      { key: "ns/r", attempt: 1 },
      { key: "ns/r", attempt: 1 },
    ],
    wantActions: [stamp("r", "1"), statusPatch("r", "2", success())],
    wantResults: [{ requeueAfterMs: 500 }, undefined],
    wantResolveCalls: 2,
  },
  {
    name: "Pending twice, then a ResolutionError (e.g. the resolver's own pending-timeout): the failure write",
    given: [request("r")],
    resolve: steps(pending({ wakeAfterMs: 1000 }), pending({ wakeAfterMs: 1000 }), () => {
      throw notFound("pod exited without a result");
    }),
    runs: [
      { key: "ns/r", attempt: 1 },
      { key: "ns/r", attempt: 1 },
      { key: "ns/r", attempt: 1 },
    ],
    wantActions: [stamp("r", "1"), statusPatch("r", "2", failure("NotFound", "pod exited without a result"))],
    wantEvents: [
      { object: "ns/r", type: "Warning", reason: "NotFound", message: "pod exited without a result" },
    ],
    wantResults: [{ requeueAfterMs: 1000 }, { requeueAfterMs: 1000 }, undefined],
    wantResolveCalls: 3,
  },
  {
    name: "a transient error between Pendings is retried as usual (the queue counts it, the SDK does not)",
    given: [request("r")],
    resolve: steps(pending({ wakeAfterMs: 1000 }), () => {
      throw new Error("apiserver blip");
    }),
    runs: [
      { key: "ns/r", attempt: 1 },
      { key: "ns/r", attempt: 1 },
    ],
    wantActions: [stamp("r", "1")],
    wantResults: [{ requeueAfterMs: 1000 }],
    wantResolveCalls: 2,
    wantError: { message: /^attempt 1 failed: apiserver blip$/, retryAfterMs: undefined },
  },
  {
    name: "a Pending is never cached: the identical request resolves on its own, and only its answer is stored",
    given: [
      request("a", [
        { name: "url", value: REF.uri },
        { name: "cache", value: "always" },
      ]),
      request("b", [
        { name: "url", value: REF.uri },
        { name: "cache", value: "always" },
      ]),
    ],
    resolve: steps(pending({ wakeAfterMs: 1000 }), ANSWER),
    runs: [
      { key: "ns/a", attempt: 1 },
      { key: "ns/b", attempt: 1 },
      { key: "ns/a", attempt: 1 },
    ],
    wantActions: [
      stamp("a", "1"),
      statusPatch("b", "2", success(cacheAnnotations("store"))),
      statusPatch("a", "3", success(cacheAnnotations("retrieve"))),
    ],
    wantResults: [{ requeueAfterMs: 1000 }, undefined, undefined],
    wantResolveCalls: 2,
    wantCacheMetrics: ["miss", "miss", "hit"],
  },
  // default-cache-mode (the runtime's key in every resolver's ConfigMap) stands in for a request
  // without a `cache` param; with one, the param wins
  {
    name: "default-cache-mode always: a request without a cache param is stored, its identical twin served from the cache",
    configData: { "default-cache-mode": "always" },
    given: [request("a"), request("b")],
    runs: [
      { key: "ns/a", attempt: 1 },
      { key: "ns/b", attempt: 1 },
    ],
    wantActions: [
      statusPatch("a", "1", success(cacheAnnotations("store"))),
      statusPatch("b", "2", success(cacheAnnotations("retrieve"))),
    ],
    wantResolveCalls: 1,
    wantCacheMetrics: ["miss", "hit"],
  },
  {
    name: "default-cache-mode never: the identical twin is resolved again, even for an immutable reference",
    configData: { "default-cache-mode": "never" },
    immutable: () => true,
    given: [request("a"), request("b")],
    runs: [
      { key: "ns/a", attempt: 1 },
      { key: "ns/b", attempt: 1 },
    ],
    wantActions: [statusPatch("a", "1", success()), statusPatch("b", "2", success())],
    wantResolveCalls: 2,
    wantCacheMetrics: ["bypass", "bypass"],
  },
  {
    name: "default-cache-mode auto: a mutable reference is resolved every time, an immutable one is cached",
    configData: { "default-cache-mode": "auto" },
    immutable: (params) => String(params.url).includes("@sha256:"),
    given: [
      request("a"),
      request("b"),
      request("c", [{ name: "url", value: `${REF.uri}@sha256:${"ab".repeat(32)}` }]),
      request("d", [{ name: "url", value: `${REF.uri}@sha256:${"ab".repeat(32)}` }]),
    ],
    runs: [
      { key: "ns/a", attempt: 1 },
      { key: "ns/b", attempt: 1 },
      { key: "ns/c", attempt: 1 },
      { key: "ns/d", attempt: 1 },
    ],
    wantActions: [
      statusPatch("a", "1", success()),
      statusPatch("b", "2", success()),
      statusPatch("c", "3", success(cacheAnnotations("store"))),
      statusPatch("d", "4", success(cacheAnnotations("retrieve"))),
    ],
    wantResolveCalls: 3,
    wantCacheMetrics: ["bypass", "bypass", "miss", "hit"],
  },
  {
    name: "a request's cache param wins over default-cache-mode: never under always resolves every time",
    configData: { "default-cache-mode": "always" },
    given: [
      request("a", [
        { name: "url", value: REF.uri },
        { name: "cache", value: "never" },
      ]),
      request("b", [
        { name: "url", value: REF.uri },
        { name: "cache", value: "never" },
      ]),
    ],
    runs: [
      { key: "ns/a", attempt: 1 },
      { key: "ns/b", attempt: 1 },
    ],
    wantActions: [statusPatch("a", "1", success()), statusPatch("b", "2", success())],
    wantResolveCalls: 2,
    wantCacheMetrics: ["bypass", "bypass"],
  },
];

for (const row of rows) {
  test(`resolver reconcile: ${row.name}`, async () => {
    const client = new FakeKubeClient({ now: () => NOW });
    const seeded = client.seed(resolutionRequests, ...row.given);
    row.arrange?.(client);
    const recorder = new FakeEventRecorder();
    const cacheMetrics: string[] = [];
    const failureMetrics: string[] = [];
    const metrics: ResolverMetrics = {
      duration: () => {},
      cache: (_type, result) => void cacheMetrics.push(result),
      inflight: () => {},
      failure: (type, reason) => void failureMetrics.push(`${type}/${reason}`),
    };
    let resolveCalls = 0;
    const attempts: number[] = [];
    const resolver: Resolver = {
      type: "git",
      paramsSchema: { type: "object", properties: { url: { type: "string" } }, additionalProperties: false },
      resolve: (params, ctx) => {
        resolveCalls++;
        attempts.push(ctx.attempt);
        row.whileResolving?.(client, requests);
        return (row.resolve ?? ok)(params, ctx);
      },
      ...(row.immutable && { isImmutable: row.immutable }),
    };
    const loaded = row.configData && parseResolverConfig(row.configData, resolver);
    const requests = new MapLister(seeded);
    const reconciler = new ResolverReconciler({
      resolver,
      client,
      requests,
      config: () => loaded || { runtime: { ...defaultRuntimeConfig, ...row.runtime }, raw: {} },
      recorder,
      metrics,
      log,
      stopping: new AbortController().signal,
      now: () => NOW,
    });

    const runs = row.runs ?? [{ key: "ns/r", attempt: 1 }];
    let thrown: unknown;
    const results: (ReconcileOutcome | undefined)[] = [];
    for (const [i, run] of runs.entries()) {
      const [namespace = "", name = ""] = run.key.split("/");
      const latest = client.object<ResolutionRequest>(resolutionRequests, namespace, name);
      if (latest) requests.set(latest);
      try {
        results.push(await reconciler.reconcile(run.key, reconcileContext({ attempt: run.attempt })));
      } catch (err) {
        if (i < runs.length - 1) throw err;
        thrown = err;
      }
    }

    assert.deepEqual(client.actions, row.wantActions);
    assert.deepEqual(recorder.events, row.wantEvents ?? []);
    // every failure written (its Warning Event) is counted once, by reason
    assert.deepEqual(
      failureMetrics,
      (row.wantEvents ?? []).filter((e) => e.type === "Warning").map((e) => `git/${e.reason}`),
    );
    assert.equal(resolveCalls, row.wantResolveCalls);
    assert.deepEqual(results, row.wantResults ?? results.map(() => undefined));
    if (row.wantAttempts) assert.deepEqual(attempts, row.wantAttempts);
    if (row.wantError) {
      assert.ok(thrown instanceof TransientError, `expected a TransientError, got ${String(thrown)}`);
      assert.match(thrown.message, row.wantError.message);
      assert.equal(thrown.retryAfterMs, row.wantError.retryAfterMs);
    } else {
      assert.equal(thrown, undefined);
    }
    if (row.wantCacheMetrics) assert.deepEqual(cacheMetrics, row.wantCacheMetrics);
  });
}
