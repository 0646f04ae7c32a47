// Table tests of the lifecycle controller's writes (knative style): given
// these requests in the cache and the apiserver, exactly these patches, Events
// and requeue come out.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ANNOTATION_ACCEPTED_BY,
  ANNOTATION_REASON,
  type Condition,
  LABEL_RESOLVER_ALIAS,
  LABEL_RESOLVER_TYPE,
  type ResolutionRequest,
  resolutionRequests,
} from "@quarry/api";
import { MapLister } from "@quarry/kube";
import { type FakeAction, FakeEventRecorder, FakeKubeClient, type RecordedEvent } from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { MESSAGE_WAITING } from "./decide.ts";
import { LifecycleReconciler } from "./reconciler.ts";

const log = createLogger({ service: "test", level: "silent" });
const T0 = Date.parse("2026-01-01T00:00:00Z");
const TIMEOUT_MS = 60_000;
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function request(
  labels: Record<string, string> | undefined,
  status?: ResolutionRequest["status"],
): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns", labels, creationTimestamp: at(0) },
    spec: { params: [] },
    status,
  };
}

const git = { [LABEL_RESOLVER_TYPE]: "git" };
const inProgress = (since = 0): Condition => ({
  type: "Succeeded",
  status: "Unknown",
  reason: "ResolutionInProgress",
  message: MESSAGE_WAITING,
  lastTransitionTime: at(since),
});
const succeeded = (since: number): Condition => ({
  type: "Succeeded",
  status: "True",
  lastTransitionTime: at(since),
});
const failed = (reason: string, message: string, since: number): Condition => ({
  type: "Succeeded",
  status: "False",
  reason,
  message,
  lastTransitionTime: at(since),
});

function patch(subresource: "" | "status", rv: string, body: Record<string, unknown>, error?: number) {
  const action: FakeAction = {
    verb: "patch",
    resource: "resolutionrequests",
    namespace: "ns",
    name: "r",
    subresource,
    body: { ...body, metadata: { ...(body.metadata as object), resourceVersion: rv } },
  };
  if (error !== undefined) action.error = error;
  return action;
}

const TTL_MS = 3_600_000;
const taskRuns = {
  group: "tekton.dev",
  version: "v1",
  plural: "taskruns",
  kind: "TaskRun",
  namespaced: true,
};
const taskRun = (status?: Record<string, unknown>) => ({
  apiVersion: "tekton.dev/v1",
  kind: "TaskRun",
  metadata: { name: "build", namespace: "ns", uid: "tr-uid" },
  ...(status ? { status } : {}),
});
function owned(rr: ResolutionRequest): ResolutionRequest {
  const ref = {
    apiVersion: "tekton.dev/v1",
    kind: "TaskRun",
    name: "build",
    uid: "tr-uid",
    controller: true,
  };
  return { ...rr, metadata: { ...rr.metadata, ownerReferences: [ref] } };
}
function deleteRequest(): FakeAction {
  return {
    verb: "delete",
    resource: "resolutionrequests",
    namespace: "ns",
    name: "r",
    subresource: "",
    body: { preconditions: { uid: "00000000-0000-4000-8000-000000000001", resourceVersion: "1" } },
  };
}

interface Row {
  name: string;
  /** In the informer's cache and in the apiserver (seeded, so resourceVersion "1"). */
  given?: ResolutionRequest;
  /** Only in the cache: the apiserver no longer has it. */
  cacheOnly?: ResolutionRequest;
  elapsedMs: number;
  /** Test hooks on the apiserver before reconciling (injected failures, racing writers). */
  arrange?: (client: FakeKubeClient) => void;
  wantActions: FakeAction[];
  wantEvents?: RecordedEvent[];
  wantRequeueMs?: number;
  /** What quarry_resolution_requests_timed_out_total was counted with ([type, reason] each). */
  wantTimedOut?: [string, string][];
}

const rows: Row[] = [
  {
    name: "a new request is initialised and its deadline requeued",
    given: request(git),
    elapsedMs: 1000,
    wantActions: [
      patch("status", "1", { status: { conditions: [inProgress(1000)], observedGeneration: 1 } }),
    ],
    wantRequeueMs: 59_000,
  },
  {
    name: "an alias label gets the canonical label first (metadata patch), then the status",
    given: request({ [LABEL_RESOLVER_ALIAS]: "in-cluster" }),
    elapsedMs: 1000,
    wantActions: [
      patch("", "1", { metadata: { labels: { [LABEL_RESOLVER_TYPE]: "cluster" } } }),
      patch("status", "2", { status: { conditions: [inProgress(1000)], observedGeneration: 1 } }),
    ],
    wantRequeueMs: 59_000,
  },
  {
    name: "an initialised request is not written again, only requeued for its deadline",
    given: request(git, { conditions: [inProgress()], observedGeneration: 1 }),
    elapsedMs: 5000,
    wantActions: [],
    wantRequeueMs: 55_000,
  },
  {
    name: "data landed: Succeeded=True, no Event",
    given: request(git, { conditions: [inProgress()], observedGeneration: 1, data: "eA==" }),
    elapsedMs: 2000,
    wantActions: [patch("status", "1", { status: { conditions: [succeeded(2000)] } })],
  },
  {
    name: "nobody answered within the deadline: timed out with a Warning Event",
    given: request(git, { conditions: [inProgress()], observedGeneration: 1 }),
    elapsedMs: TIMEOUT_MS,
    wantActions: [
      patch("status", "1", {
        status: {
          annotations: { [ANNOTATION_REASON]: "NoResolver" },
          conditions: [
            failed("ResolutionTimedOut", "no resolver for type git answered within 1m0s", TIMEOUT_MS),
          ],
        },
      }),
    ],
    wantEvents: [
      {
        object: "ns/r",
        type: "Warning",
        reason: "ResolutionTimedOut",
        message: "no resolver for type git answered within 1m0s",
      },
    ],
    wantTimedOut: [["git", "NoResolver"]],
  },
  {
    name: "a resolver stamped the request: the timeout message says it took too long",
    given: request(git, {
      conditions: [inProgress()],
      observedGeneration: 1,
      annotations: { [ANNOTATION_ACCEPTED_BY]: "git-resolver/pod" },
    }),
    elapsedMs: 61_000,
    wantActions: [
      patch("status", "1", {
        status: {
          annotations: { [ANNOTATION_ACCEPTED_BY]: "git-resolver/pod", [ANNOTATION_REASON]: "TimedOut" },
          conditions: [
            failed("ResolutionTimedOut", "resolution took longer than global timeout of 1m0s", 61_000),
          ],
        },
      }),
    ],
    wantEvents: [
      {
        object: "ns/r",
        type: "Warning",
        reason: "ResolutionTimedOut",
        message: "resolution took longer than global timeout of 1m0s",
      },
    ],
    wantTimedOut: [["git", "TimedOut"]],
  },
  {
    name: "no resolver label: failed at once with a Warning Event, no requeue",
    given: request(undefined),
    elapsedMs: 0,
    wantActions: [
      patch("status", "1", {
        status: {
          conditions: [
            failed(
              "ResolutionFailed",
              `request has neither the "${LABEL_RESOLVER_TYPE}" label nor its alias "${LABEL_RESOLVER_ALIAS}", so no resolver can claim it`,
              0,
            ),
          ],
          observedGeneration: 1,
          annotations: { [ANNOTATION_REASON]: "MissingResolverLabel" },
        },
      }),
    ],
    wantEvents: [
      {
        object: "ns/r",
        type: "Warning",
        reason: "ResolutionFailed",
        message: `request has neither the "${LABEL_RESOLVER_TYPE}" label nor its alias "${LABEL_RESOLVER_ALIAS}", so no resolver can claim it`,
      },
    ],
  },
  {
    name: "a done request is not written; looked at again when its completed-request-ttl passes",
    given: request(git, { conditions: [succeeded(0)], data: "eA==" }),
    elapsedMs: 120_000,
    wantActions: [],
    wantRequeueMs: TTL_MS - 120_000,
  },
  {
    name: "past its ttl, no owner: deleted, only if still the object decided on (uid, resourceVersion)",
    given: request(git, { conditions: [succeeded(0)], data: "eA==" }),
    elapsedMs: TTL_MS,
    wantActions: [deleteRequest()],
  },
  {
    name: "past its ttl, changed meanwhile: the 409 ends it quietly (the informer brings the change)",
    given: request(git, { conditions: [succeeded(0)], data: "eA==" }),
    elapsedMs: TTL_MS,
    arrange: (client) => client.failNext("delete", 409),
    wantActions: [{ ...deleteRequest(), error: 409 }],
  },
  {
    name: "past its ttl, owned by a TaskRun still running (it may not have read it): kept, rechecked",
    given: owned(request(git, { conditions: [succeeded(0)], data: "eA==" })),
    elapsedMs: TTL_MS,
    arrange: (client) => client.seed(taskRuns, taskRun()),
    wantActions: [],
    wantRequeueMs: 5 * 60_000,
  },
  {
    name: "past its ttl, owned by a TaskRun that is done: deleted",
    given: owned(request(git, { conditions: [succeeded(0)], data: "eA==" })),
    elapsedMs: TTL_MS,
    arrange: (client) => client.seed(taskRuns, taskRun({ conditions: [succeeded(10)] })),
    wantActions: [deleteRequest()],
  },
  {
    name: "past its ttl, owner gone (or no Tekton here): deleted",
    given: owned(request(git, { conditions: [failed("ResolutionFailed", "x", 0)] })),
    elapsedMs: TTL_MS,
    wantActions: [deleteRequest()],
  },
  {
    name: "past its ttl, owner not readable (RBAC): kept, rechecked",
    given: owned(request(git, { conditions: [succeeded(0)], data: "eA==" })),
    elapsedMs: TTL_MS,
    arrange: (client) => client.failNext("get", 403),
    wantActions: [],
    wantRequeueMs: 5 * 60_000,
  },
  {
    name: "deleted (not in the cache): no API call at all",
    elapsedMs: 0,
    wantActions: [],
  },
  {
    name: "gone from the apiserver but still cached: the 404 ends it quietly",
    cacheOnly: { ...request(git), metadata: { ...request(git).metadata, resourceVersion: "7" } },
    elapsedMs: 1000,
    wantActions: [patch("status", "7", { status: { conditions: [inProgress(1000)] } }, 404)],
    wantRequeueMs: 59_000,
  },
  {
    name: "the resolver's data write wins the race (409): recomputed to Succeeded=True",
    given: request(git),
    elapsedMs: 1000,
    arrange: (client) => {
      let raced = false;
      client.react((call) => {
        if (raced || call.verb !== "patch") return undefined;
        raced = true;
        // the resolver's data lands between our read and our write
        const latest = client.object<ResolutionRequest>(resolutionRequests, "ns", "r")!;
        client.seed(resolutionRequests, { ...latest, status: { data: "eA==" } });
        return undefined;
      });
    },
    wantActions: [
      patch("status", "1", { status: { conditions: [inProgress(1000)], observedGeneration: 1 } }, 409),
      patch("status", "2", { status: { conditions: [succeeded(1000)], observedGeneration: 1 } }),
    ],
    wantRequeueMs: undefined,
  },
  {
    name: "a conflict on the label patch is retried from the re-read object",
    given: request({ [LABEL_RESOLVER_ALIAS]: "bundle" }),
    elapsedMs: 1000,
    arrange: (client) => client.failNext("patch", 409, { subresource: "" }),
    wantActions: [
      patch("", "1", { metadata: { labels: { [LABEL_RESOLVER_TYPE]: "bundles" } } }, 409),
      patch("", "1", { metadata: { labels: { [LABEL_RESOLVER_TYPE]: "bundles" } } }),
      patch("status", "2", { status: { conditions: [inProgress(1000)], observedGeneration: 1 } }),
    ],
    wantRequeueMs: 59_000,
  },
];

for (const row of rows) {
  test(`lifecycle reconcile: ${row.name}`, async () => {
    const client = new FakeKubeClient({ now: () => T0 });
    const cached = row.given ? client.seed(resolutionRequests, row.given) : [];
    if (row.cacheOnly) cached.push(row.cacheOnly);
    row.arrange?.(client);
    const recorder = new FakeEventRecorder();
    const timedOut: [string, string][] = [];
    const reconciler = new LifecycleReconciler({
      client,
      requests: new MapLister(cached),
      config: () => ({ maxResolutionTimeoutMs: TIMEOUT_MS, completedRequestTtlMs: TTL_MS }),
      recorder,
      log,
      now: () => T0 + row.elapsedMs,
      timedOut: (type, reason) => timedOut.push([type, reason]),
    });

    const outcome = await reconciler.reconcile("ns/r");

    assert.deepEqual(client.actions, row.wantActions);
    assert.deepEqual(recorder.events, row.wantEvents ?? []);
    assert.equal(outcome?.requeueAfterMs, row.wantRequeueMs);
    assert.deepEqual(timedOut, row.wantTimedOut ?? [], "requests counted as timed out");
  });
}
