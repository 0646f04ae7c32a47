// Table tests of the run-controller's writes (knative style): given a
// CustomRun (and its ResolutionRequest) in the cache and the apiserver,
// exactly these writes, Events, enforcement counts and requeue come out; and a
// second reconcile from what the informers then hold writes nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type Condition,
  type CustomRun,
  customRuns,
  LABEL_RESOLVER_TYPE,
  type Param,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
  type ResolutionRequest,
  requestNameFor,
  resolutionRequests,
} from "@quarry/api";
import { LABEL_RUN } from "@quarry/customtask-sdk/internal";
import { MapLister } from "@quarry/kube";
import { type FakeAction, FakeEventRecorder, FakeKubeClient, type RecordedEvent } from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { defaultRunControllerConfig } from "./config.ts";
import { ANNOTATION_RUN_REQUEST } from "./decide.ts";
import { RunReconciler } from "./reconciler.ts";

const log = createLogger({ service: "test", level: "silent" });
const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** A stamp exact to the ms (the tests count from T0 itself); apiserver stamps (`at`) are whole seconds. */
const exact = (ms: number) => new Date(T0 + ms).toISOString();
const GRACE = 30_000;

const WAIT_API = "wait.testing.tekton.dev/v1beta1";
const TARGET = `Wait (apiVersion ${WAIT_API})`;
const PARAMS: Param[] = [
  { name: "url", value: "https://github.com/tektoncd/catalog.git" },
  { name: "pathInRepo", value: "task/wait.yaml" },
];
const REQUEST = requestNameFor({ resolverType: "git", namespace: "ns", name: "x", spec: { params: PARAMS } });
const REQUEST_CHILD = { apiVersion: RESOLUTION_V1BETA1, kind: RESOLUTION_REQUEST_KIND, name: REQUEST };
/** The request recorded on the run: childReferences, and status.annotations for schemas that prune them. */
const TAKEN = `ResolutionRequest ${REQUEST} already exists and asks for something else (param "pathInRepo" missing from the existing request; param "url" has another value); it is not this run's`;
const RECORDED = { childReferences: [REQUEST_CHILD], annotations: { [ANNOTATION_RUN_REQUEST]: REQUEST } };
const NOT_FOUND = `no controller initialised the status of this CustomRun within 30s: nothing handles ${TARGET}`;
const PIPELINE_CANCEL = "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.";

function customRun(
  opts: { remote?: boolean; status?: CustomRun["status"]; spec?: Partial<CustomRun["spec"]> } = {},
): CustomRun {
  const customRef = opts.remote
    ? { apiVersion: WAIT_API, kind: "Wait", resolver: "git", params: PARAMS }
    : { apiVersion: WAIT_API, kind: "Wait" };
  const run: CustomRun = {
    apiVersion: "tekton.dev/v1beta1",
    kind: "CustomRun",
    metadata: { name: "x", namespace: "ns", uid: "uid-x", creationTimestamp: exact(0) },
    spec: { customRef, ...opts.spec },
  };
  if (opts.status) run.status = opts.status;
  return run;
}

const cond = (status: Condition["status"], reason: string, since: number, message?: string): Condition => ({
  type: "Succeeded",
  status,
  reason,
  ...(message ? { message } : {}),
  lastTransitionTime: at(since),
});
const READY: Condition = { type: "Ready", status: "True", lastTransitionTime: at(0) };
/** Started at exactly 0 (a stamp with a fraction counts from itself). */
const running = {
  startTime: new Date(T0).toISOString(),
  conditions: [cond("Unknown", "Running", 0)],
};

/** The request as the run-controller creates it (what the apiserver receives). */
const wantRequest: ResolutionRequest = {
  apiVersion: RESOLUTION_V1BETA1,
  kind: RESOLUTION_REQUEST_KIND,
  metadata: {
    name: REQUEST,
    namespace: "ns",
    labels: { [LABEL_RUN]: "x", [LABEL_RESOLVER_TYPE]: "git" },
    ownerReferences: [
      {
        apiVersion: "tekton.dev/v1beta1",
        kind: "CustomRun",
        name: "x",
        uid: "uid-x",
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  },
  spec: { params: PARAMS },
};

function createRequest(error?: number): FakeAction {
  const action: FakeAction = {
    verb: "create",
    resource: "resolutionrequests",
    namespace: "ns",
    name: REQUEST,
    subresource: "",
    body: wantRequest,
  };
  if (error !== undefined) action.error = error;
  return action;
}

function statusPatch(rv: string, status: Record<string, unknown>, error?: number): FakeAction {
  const action: FakeAction = {
    verb: "patch",
    resource: "customruns",
    namespace: "ns",
    name: "x",
    subresource: "status",
    body: { status, metadata: { resourceVersion: rv } },
  };
  if (error !== undefined) action.error = error;
  return action;
}

const failed = (reason: string, message: string, now: number, others: Condition[] = []) => ({
  conditions: [...others, cond("False", reason, now, message)],
  completionTime: at(now),
});

/** A custom-task controller's write landing between our read and our status patch. */
function racingStatus(client: FakeKubeClient, status: CustomRun["status"]): void {
  let raced = false;
  client.react((call) => {
    if (raced || call.verb !== "patch" || call.resource !== "customruns") return undefined;
    raced = true;
    const latest = client.object<CustomRun>(customRuns, "ns", "x");
    assert.ok(latest);
    client.seed(customRuns, { ...latest, status });
    return undefined;
  });
}

interface Row {
  name: string;
  /** In the runs cache and in the apiserver (seeded first: resourceVersion "1"). */
  run: CustomRun;
  /** ResolutionRequests in the requests cache and in the apiserver. */
  requests?: ResolutionRequest[];
  /** ResolutionRequests only in the apiserver (the informer selects on quarry.dev/run). */
  serverOnly?: ResolutionRequest[];
  /** ms after T0, when the run was created. */
  now: number;
  arrange?: (client: FakeKubeClient) => void;
  wantActions: FakeAction[];
  wantEvents?: RecordedEvent[];
  wantEnforcements?: [reason: string, flavour: string][];
  wantRequeueMs?: number;
  /** Writes of a second reconcile from what the informers then hold (none unless said). */
  wantSecond?: FakeAction[];
}

const rows: Row[] = [
  {
    name: "remote ref: the request is created, then one status patch recording it",
    run: customRun({ remote: true }),
    now: 1_000,
    wantActions: [createRequest(), statusPatch("1", RECORDED)],
    wantRequeueMs: 29_000,
  },
  {
    name: "remote ref whose request the cache already holds: no create, only the reference",
    run: customRun({ remote: true, status: running }),
    requests: [{ ...wantRequest, status: { conditions: [{ type: "Succeeded", status: "Unknown" }] } }],
    now: 1_000,
    wantActions: [statusPatch("1", RECORDED)],
    wantRequeueMs: 3_600_000 + 1 + GRACE - 1_000,
  },
  {
    name: "nobody initialised the run: ControllerNotFound, a Warning Event, the enforcement counted",
    run: customRun(),
    now: 30_000,
    wantActions: [statusPatch("1", failed("ControllerNotFound", NOT_FOUND, 30_000))],
    wantEvents: [{ object: "ns/x", type: "Warning", reason: "ControllerNotFound", message: NOT_FOUND }],
    wantEnforcements: [["ControllerNotFound", "CustomRun"]],
  },
  {
    name: "before the initial-update timeout: no write, requeued for the remaining time",
    run: customRun(),
    now: 12_000,
    wantActions: [],
    wantRequeueMs: 18_000,
  },
  {
    name: "a 409 whose latest object is done (its controller finished it): nothing written",
    run: customRun(),
    now: 30_000,
    arrange: (client) =>
      racingStatus(client, {
        ...running,
        conditions: [cond("True", "Succeeded", 29_000)],
        completionTime: at(29_000),
      }),
    wantActions: [statusPatch("1", failed("ControllerNotFound", NOT_FOUND, 30_000), 409)],
  },
  {
    name: "a 409 re-decides from the latest object: the racing writer's condition kept",
    run: customRun(),
    now: 30_000,
    arrange: (client) => racingStatus(client, { conditions: [READY] }),
    wantActions: [
      statusPatch("1", failed("ControllerNotFound", NOT_FOUND, 30_000), 409),
      statusPatch("2", failed("ControllerNotFound", NOT_FOUND, 30_000, [READY])),
    ],
    wantEvents: [{ object: "ns/x", type: "Warning", reason: "ControllerNotFound", message: NOT_FOUND }],
    wantEnforcements: [["ControllerNotFound", "CustomRun"]],
  },
  {
    name: "a 409 whose latest object was initialised meanwhile: nothing written, its timeout requeued",
    run: customRun(),
    now: 30_000,
    arrange: (client) => racingStatus(client, running),
    wantActions: [statusPatch("1", failed("ControllerNotFound", NOT_FOUND, 30_000), 409)],
    wantRequeueMs: 3_600_000 + 1 + GRACE - 30_000,
  },
  {
    name: "timed out and left running past the grace: CustomRunTimedOut with Tekton's message",
    run: customRun({ status: running, spec: { timeout: "1s" } }),
    now: 31_001,
    wantActions: [
      statusPatch("1", failed("CustomRunTimedOut", 'CustomRun "x" failed to finish within "1s"', 31_001)),
    ],
    wantEvents: [
      {
        object: "ns/x",
        type: "Warning",
        reason: "CustomRunTimedOut",
        message: `timed out and the controller of ${TARGET} did not end the run within 30s: CustomRun "x" failed to finish within "1s"`,
      },
    ],
    wantEnforcements: [["CustomRunTimedOut", "CustomRun"]],
  },
  {
    name: "a request under the run's name asking for other params: not adopted, the run fails saying so",
    run: customRun({ remote: true }),
    serverOnly: [
      {
        ...wantRequest,
        metadata: { ...wantRequest.metadata, labels: { [LABEL_RESOLVER_TYPE]: "git" } },
        spec: { params: [{ name: "url", value: "https://example.com/other.git" }] },
      },
    ],
    now: 1_000,
    wantActions: [createRequest(409), statusPatch("1", failed("ResolutionFailed", TAKEN, 1_000))],
    wantEvents: [{ object: "ns/x", type: "Warning", reason: "ResolutionFailed", message: TAKEN }],
    wantEnforcements: [["ResolutionFailed", "CustomRun"]],
    // done: no create again, no child recorded
    wantSecond: [],
  },
  {
    name: "a done run: nothing, whatever its deadlines",
    run: customRun({
      status: { ...running, conditions: [cond("True", "Succeeded", 500)], completionTime: at(500) },
      spec: { timeout: "1s", status: "RunCancelled" },
    }),
    now: 10 * 3_600_000,
    wantActions: [],
  },
];

/** A fixed clock, a fake apiserver and caches seeded with the row's objects. */
function setup(row: Pick<Row, "run" | "requests" | "serverOnly">, now: { ms: number }) {
  const client = new FakeKubeClient({ now: () => T0 + now.ms });
  const [run] = client.seed(customRuns, row.run);
  const cached = client.seed(resolutionRequests, ...(row.requests ?? []));
  client.seed(resolutionRequests, ...(row.serverOnly ?? []));
  const runs = new MapLister<CustomRun>(run ? [run] : []);
  const requests = new MapLister<ResolutionRequest>(cached);
  const recorder = new FakeEventRecorder();
  const enforcements: [string, string][] = [];
  const reconciler = new RunReconciler({
    client,
    runs,
    requests,
    config: () => defaultRunControllerConfig,
    recorder,
    log,
    onEnforcement: (reason, flavour) => enforcements.push([reason, flavour]),
    now: () => T0 + now.ms,
  });
  /** What the informers would hold now: the run, and requests carrying the run label. */
  const sync = () => {
    const latest = client.object<CustomRun>(customRuns, "ns", "x");
    if (latest) runs.set(latest);
    const rr = client.object<ResolutionRequest>(resolutionRequests, "ns", REQUEST);
    if (rr?.metadata.labels?.[LABEL_RUN]) requests.set(rr);
  };
  return { client, recorder, enforcements, reconciler, sync };
}

for (const row of rows) {
  test(`run reconcile: ${row.name}`, async () => {
    const now = { ms: row.now };
    const { client, recorder, enforcements, reconciler, sync } = setup(row, now);
    row.arrange?.(client);

    const outcome = await reconciler.reconcile("ns/x");

    assert.deepEqual(client.actions, row.wantActions);
    assert.deepEqual(recorder.events, row.wantEvents ?? []);
    assert.deepEqual(enforcements, row.wantEnforcements ?? []);
    assert.equal(outcome?.requeueAfterMs, row.wantRequeueMs);

    // idempotent: once the informers caught up, the same reconcile writes nothing twice
    sync();
    client.clearActions();
    await reconciler.reconcile("ns/x");
    assert.deepEqual(client.actions, row.wantSecond ?? [], "second reconcile");
    assert.deepEqual(recorder.events, row.wantEvents ?? [], "second reconcile's Events");
    assert.deepEqual(enforcements, row.wantEnforcements ?? [], "second reconcile's enforcements");
  });
}

test("run reconcile: a cancel without managedFields gets its grace from when it was first seen", async () => {
  const now = { ms: 10_000 };
  const run = customRun({
    status: running,
    spec: { status: "RunCancelled", statusMessage: PIPELINE_CANCEL },
  });
  const { client, recorder, enforcements, reconciler } = setup({ run }, now);

  assert.deepEqual(await reconciler.reconcile("ns/x"), { requeueAfterMs: GRACE });
  now.ms += GRACE - 1;
  assert.deepEqual(await reconciler.reconcile("ns/x"), { requeueAfterMs: 1 });
  assert.deepEqual(client.actions, []);

  now.ms += 1;
  assert.equal(await reconciler.reconcile("ns/x"), undefined);
  assert.deepEqual(client.actions, [
    statusPatch("1", failed("CustomRunCancelled", PIPELINE_CANCEL, 10_000 + GRACE)),
  ]);
  assert.deepEqual(recorder.events, [
    {
      object: "ns/x",
      type: "Warning",
      reason: "CustomRunCancelled",
      message: `cancel requested and the controller of ${TARGET} did not stop the run within 30s: ${PIPELINE_CANCEL}`,
    },
  ]);
  assert.deepEqual(enforcements, [["CustomRunCancelled", "CustomRun"]]);
});

test("run reconcile: a run gone from the cache needs no API call", async () => {
  const { client, reconciler } = setup({ run: customRun() }, { ms: 60_000 });
  assert.equal(await reconciler.reconcile("ns/other"), undefined);
  assert.deepEqual(client.calls, []);
});
