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
import {
  type FakeAction,
  FakeEventRecorder,
  FakeKubeClient,
  MapLister,
  type RecordedEvent,
  TransientError,
} from "@quarry/kube";
import { createLogger } from "@quarry/observability";
import { defaultRuntimeConfig, type RuntimeConfig } from "./config.ts";
import { ResolverReconciler } from "./controller.ts";
import { notFound } from "./errors.ts";
import type { ResolverMetrics } from "./metrics.ts";
import type { Params, Resolved, Resolver } from "./resolver.ts";

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

const ok = async (): Promise<Resolved> => ({
  data: new TextEncoder().encode(TASK),
  annotations: { "example.dev/commit": "abc" },
  refSource: REF,
});

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

const success = (extra: Record<string, string> = {}) => ({
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
  resolve?: (params: Params) => Promise<Resolved>;
  /** Reconciles in order; the default is one first attempt of "ns/r". */
  runs?: { key: string; attempt: number }[];
  runtime?: Partial<RuntimeConfig>;
  arrange?: (client: FakeKubeClient) => void;
  wantActions: FakeAction[];
  wantEvents?: RecordedEvent[];
  wantResolveCalls: number;
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
    name: "a retry stamps accepted-by at once; the data write then recomputes past that stamp",
    given: [request("r")],
    resolve: async () => {
      await new Promise((r) => setTimeout(r, 20));
      return ok();
    },
    runs: [{ key: "ns/r", attempt: 2 }],
    wantActions: [
      statusPatch("r", "1", { annotations: { [ANNOTATION_ACCEPTED_BY]: IDENTITY } }),
      statusPatch("r", "1", success(), 409),
      statusPatch("r", "2", success()),
    ],
    wantResolveCalls: 1,
  },
];

for (const row of rows) {
  test(`resolver reconcile: ${row.name}`, async () => {
    const client = new FakeKubeClient({ now: () => NOW });
    const seeded = client.seed(resolutionRequests, ...row.given);
    row.arrange?.(client);
    const recorder = new FakeEventRecorder();
    const cacheMetrics: string[] = [];
    const metrics: ResolverMetrics = {
      duration: () => {},
      cache: (_type, result) => void cacheMetrics.push(result),
      inflight: () => {},
    };
    let resolveCalls = 0;
    const resolver: Resolver = {
      type: "git",
      paramsSchema: { type: "object", properties: { url: { type: "string" } }, additionalProperties: false },
      resolve: (params) => {
        resolveCalls++;
        return (row.resolve ?? ok)(params);
      },
    };
    const reconciler = new ResolverReconciler({
      resolver,
      client,
      requests: new MapLister(seeded),
      config: () => ({ runtime: { ...defaultRuntimeConfig, ...row.runtime }, raw: {} }),
      recorder,
      metrics,
      log,
      stopping: new AbortController().signal,
      now: () => NOW,
    });

    const runs = row.runs ?? [{ key: "ns/r", attempt: 1 }];
    let thrown: unknown;
    for (const [i, run] of runs.entries()) {
      try {
        await reconciler.reconcile(run.key, { attempt: run.attempt });
      } catch (err) {
        if (i < runs.length - 1) throw err;
        thrown = err;
      }
    }

    assert.deepEqual(client.actions, row.wantActions);
    assert.deepEqual(recorder.events, row.wantEvents ?? []);
    assert.equal(resolveCalls, row.wantResolveCalls);
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
