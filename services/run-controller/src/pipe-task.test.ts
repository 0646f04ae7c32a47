// Table tests of the Pipe task's writes through the SDK's TaskReconciler
// (knative style): given a Pipe run and its requests, exactly these writes.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AnyRun,
  type Condition,
  customRuns,
  type ResolutionRequest,
  type RunStatus,
  resolutionRequests,
} from "@quarry/api";
import { TaskReconciler } from "@quarry/customtask-sdk/internal";
import { MapLister, type ReconcileOutcome } from "@quarry/kube";
import { type FakeAction, FakeEventRecorder, FakeKubeClient } from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { buildRequest } from "@quarry/requester";
import { pipeRequestFor } from "./pipe-run.ts";
import { PipeTask } from "./pipe-task.ts";

const log = createLogger({ service: "test", level: "silent" });
const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const HOUR = 3_600_000;

function mkRun(o: { status?: RunStatus; retries?: number; cancel?: boolean; timeout?: string } = {}): AnyRun {
  const spec: Record<string, unknown> = {
    customRef: { apiVersion: "quarry.dev/v1alpha1", kind: "Pipe", name: "make-cert" },
    params: [{ name: "cn", value: "example.com" }],
  };
  if (o.retries) spec.retries = o.retries;
  if (o.timeout) spec.timeout = o.timeout;
  if (o.cancel) Object.assign(spec, { status: "RunCancelled" });
  const run = {
    apiVersion: "tekton.dev/v1beta1",
    kind: "CustomRun",
    metadata: { name: "certs", namespace: "ns", uid: "uid-certs", generation: 1 },
    spec,
  } as AnyRun;
  if (o.status) run.status = o.status;
  return run;
}

function cond(status: Condition["status"], reason: string, since: number, message?: string): Condition {
  const c: Condition = { type: "Succeeded", status, reason, lastTransitionTime: at(since) };
  if (message) c.message = message;
  return c;
}

const running = (extra: RunStatus = {}): RunStatus => ({
  startTime: at(0),
  conditions: [cond("Unknown", "Running", 0)],
  ...extra,
});

/** The attempt's request as the requester builds it, with a status. */
function attemptRequest(attempt: number, status?: ResolutionRequest["status"]): ResolutionRequest {
  const plan = pipeRequestFor(mkRun(), attempt);
  assert.ok(plan.ok);
  const rr = buildRequest(plan.input);
  if (status) rr.status = status;
  return rr;
}
const nameOf = (attempt: number) => attemptRequest(attempt).metadata.name!;

const statusPatch = (rv: string, status: Record<string, unknown>): FakeAction => ({
  verb: "patch",
  resource: "customruns",
  namespace: "ns",
  name: "certs",
  subresource: "status",
  body: { status, metadata: { resourceVersion: rv } },
});

const childOf = (...attempts: number[]) =>
  attempts.map((a) => ({
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    name: nameOf(a),
  }));

const createOf = (attempt: number): FakeAction => ({
  verb: "create",
  resource: "resolutionrequests",
  namespace: "ns",
  name: nameOf(attempt),
  subresource: "",
  body: attemptRequest(attempt),
});

const deleteOf = (attempt: number): FakeAction => ({
  verb: "delete",
  resource: "resolutionrequests",
  namespace: "ns",
  name: nameOf(attempt),
  subresource: "",
  body: { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Background" },
});

const failedPod = {
  conditions: [
    { type: "Succeeded", status: "False" as const, reason: "ResolutionFailed", message: "pod p failed" },
  ],
  annotations: { "quarry.dev/reason": "PodFailed" },
};

interface Row {
  name: string;
  given: AnyRun;
  /** Requests in the apiserver and the informer's cache. */
  requests?: ResolutionRequest[];
  elapsedMs: number;
  wantActions: FakeAction[];
  wantOutcome?: ReconcileOutcome;
}

const rows: Row[] = [
  {
    name: "a new Pipe run: its attempt's request created, the run started and waiting on it in one write",
    given: mkRun(),
    elapsedMs: 0,
    wantActions: [
      createOf(1),
      statusPatch("1", {
        startTime: at(0),
        conditions: [cond("Unknown", "Running", 0, `waiting for ResolutionRequest ${nameOf(1)}`)],
        childReferences: childOf(1),
      }),
    ],
    wantOutcome: { requeueAfterMs: HOUR + 1000 + 1 },
  },
  {
    name: "its request resolved: succeeded with a result per key",
    given: mkRun({ status: running({ childReferences: childOf(1) }) }),
    requests: [
      attemptRequest(1, {
        conditions: [{ type: "Succeeded", status: "True" }],
        data: Buffer.from(
          "- {key: tls-crt, kind: Secret, name: certs-make-cert-tls-crt, sha256: aa}\n",
        ).toString("base64"),
      }),
    ],
    elapsedMs: 5000,
    wantActions: [
      statusPatch("1", {
        conditions: [cond("True", "Succeeded", 5000, "stored Secret certs-make-cert-tls-crt")],
        completionTime: at(5000),
        results: [{ name: "tls-crt", value: "certs-make-cert-tls-crt" }],
      }),
    ],
  },
  {
    name: "its request failed with a retry left: the attempt recorded, the next attempt's request created",
    given: mkRun({ status: running({ childReferences: childOf(1) }), retries: 1 }),
    requests: [attemptRequest(1, failedPod)],
    elapsedMs: 5000,
    wantActions: [
      statusPatch("1", {
        // the condition stays Unknown/Running, so its transition time stays too
        conditions: [
          cond(
            "Unknown",
            "Running",
            0,
            `attempt 2 of 2 after PodFailed: ResolutionRequest ${nameOf(1)} failed: pod p failed`,
          ),
        ],
        retriesStatus: [
          {
            startTime: at(0),
            completionTime: at(5000),
            conditions: [
              cond("False", "PodFailed", 5000, `ResolutionRequest ${nameOf(1)} failed: pod p failed`),
            ],
          },
        ],
        startTime: at(5000),
        completionTime: null,
        results: null,
      }),
      createOf(2),
      statusPatch("3", {
        conditions: [cond("Unknown", "Running", 0, `waiting for ResolutionRequest ${nameOf(2)}`)],
        childReferences: childOf(1, 2),
      }),
    ],
    wantOutcome: { requeueAfterMs: HOUR + 1000 + 1 },
  },
  {
    name: "its request failed for good (the Pipe is missing): no retry is spent on it",
    given: mkRun({ status: running({ childReferences: childOf(1) }), retries: 1 }),
    requests: [
      attemptRequest(1, {
        conditions: [
          { type: "Succeeded", status: "False", reason: "ResolutionFailed", message: "no Pipe make-cert" },
        ],
        annotations: { "quarry.dev/reason": "PipeNotFound" },
      }),
    ],
    elapsedMs: 5000,
    wantActions: [
      statusPatch("1", {
        conditions: [
          cond("False", "PipeNotFound", 5000, `ResolutionRequest ${nameOf(1)} failed: no Pipe make-cert`),
        ],
        completionTime: at(5000),
      }),
    ],
  },
  {
    name: "cancelled: the run ends and its attempt's request is deleted (its pod goes with it)",
    given: mkRun({ status: running(), cancel: true }),
    requests: [attemptRequest(1)],
    elapsedMs: 5000,
    wantActions: [
      statusPatch("1", {
        conditions: [cond("False", "CustomRunCancelled", 5000, 'CustomRun "certs" was cancelled')],
        completionTime: at(5000),
      }),
      deleteOf(1),
    ],
  },
  {
    name: "timed out: the run ends and its attempt's request is deleted",
    given: mkRun({ status: running(), timeout: "10s" }),
    requests: [attemptRequest(1)],
    elapsedMs: 11_001,
    wantActions: [
      statusPatch("1", {
        conditions: [
          cond("False", "CustomRunTimedOut", 11_001, 'CustomRun "certs" failed to finish within "10s"'),
        ],
        completionTime: at(11_001),
      }),
      deleteOf(1),
    ],
  },
];

for (const row of rows) {
  test(`PipeTask: ${row.name}`, async () => {
    const now = () => T0 + row.elapsedMs;
    const client = new FakeKubeClient({ now });
    const [stored] = client.seed(customRuns, row.given);
    const requests = client.seed(resolutionRequests, ...(row.requests ?? []));
    const reconciler = new TaskReconciler({
      task: new PipeTask({ client, requests: new MapLister<ResolutionRequest>(requests) }),
      client,
      runs: new MapLister<AnyRun>([stored!]),
      requests: new MapLister<ResolutionRequest>(requests),
      recorder: new FakeEventRecorder(),
      log,
      defaultTimeoutMs: () => HOUR,
      stopping: new AbortController().signal,
      now,
    });
    const outcome = await reconciler.reconcile("ns/certs");
    assert.deepEqual(client.writes(), row.wantActions, "writes");
    assert.deepEqual(outcome, row.wantOutcome, "outcome");
  });
}

test("PipeTask: a cancelled run whose request is already gone ends without an error", async () => {
  const client = new FakeKubeClient({ now: () => T0 + 1000 });
  const [stored] = client.seed(customRuns, mkRun({ status: running(), cancel: true }));
  const reconciler = new TaskReconciler({
    task: new PipeTask({ client, requests: new MapLister<ResolutionRequest>([]) }),
    client,
    runs: new MapLister<AnyRun>([stored!]),
    requests: new MapLister<ResolutionRequest>([]),
    recorder: new FakeEventRecorder(),
    log,
    defaultTimeoutMs: () => HOUR,
    stopping: new AbortController().signal,
    now: () => T0 + 1000,
  });
  assert.equal(await reconciler.reconcile("ns/certs"), undefined);
  const writes = client.writes();
  assert.deepEqual(
    writes.map((w) => [w.verb, w.resource, w.error]),
    [
      ["patch", "customruns", undefined],
      ["delete", "resolutionrequests", 404],
    ],
  );
});
