// The run-controller's decisions as a table over decide(run, world), each row
// for both flavours (Run and CustomRun, whose reasons differ): the request a
// remote ref needs, the references and provenance recorded, and when the
// custom-task contract is enforced. Every row also checks idempotence: from
// the state the decision produces, nothing more is decided.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ANNOTATION_REASON,
  type AnyRun,
  type ChildReference,
  type Condition,
  LABEL_RESOLVER_TYPE,
  type Param,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
  type RefSource,
  type ResolutionRequest,
  type ResolutionRequestStatus,
  RUN_REASONS,
  type RunFlavour,
  type RunRef,
  type RunStatus,
  requestNameFor,
} from "@quarry/api";
import { buildRequest } from "@quarry/requester";
import { defaultRunControllerConfig, type RunControllerConfig } from "./config.ts";
import {
  ANNOTATION_RUN_REF_SOURCE,
  ANNOTATION_RUN_REQUEST,
  cancelRequestedAt,
  decide,
  type RunDecision,
  type RunWorld,
} from "./decide.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** A stamp exact to the ms (the rows count from T0 itself); apiserver stamps (`at`) are whole seconds. */
const exact = (ms: number) => new Date(T0 + ms).toISOString();
const HOUR = 3_600_000;
const GRACE = 30_000;

const WAIT_API = "wait.testing.tekton.dev/v1beta1";
const TARGET = `Wait (apiVersion ${WAIT_API})`;
const PARAMS: Param[] = [
  { name: "url", value: "https://github.com/tektoncd/catalog.git" },
  { name: "pathInRepo", value: "task/wait.yaml" },
];
const REQUEST = requestNameFor({ resolverType: "git", namespace: "ns", name: "x", spec: { params: PARAMS } });
const REQUEST_CHILD: ChildReference = {
  apiVersion: RESOLUTION_V1BETA1,
  kind: RESOLUTION_REQUEST_KIND,
  name: REQUEST,
};
const TASKRUN_CHILD: ChildReference = { apiVersion: "tekton.dev/v1", kind: "TaskRun", name: "x-step" };
const REF_SOURCE: RefSource = {
  uri: "git+https://github.com/tektoncd/catalog.git",
  digest: { sha1: "0123456789abcdef0123456789abcdef01234567" },
  entryPoint: "task/wait.yaml",
};

/** The request as recorded on the run: childReferences, and status.annotations (which every CRD schema keeps). */
const REQUEST_NOTE = { [ANNOTATION_RUN_REQUEST]: REQUEST };
const REF_SOURCE_NOTE = { [ANNOTATION_RUN_REF_SOURCE]: JSON.stringify(REF_SOURCE) };
const RECORDED: RunStatus = { childReferences: [REQUEST_CHILD], annotations: REQUEST_NOTE };

const localRef: RunRef = { apiVersion: WAIT_API, kind: "Wait" };
const remoteRef = (resolver = "git"): RunRef => ({ ...localRef, resolver, params: PARAMS });

interface Given {
  ref?: RunRef;
  status?: RunStatus;
  timeout?: string;
  /** spec.status RunCancelled, with this statusMessage ("" for none). */
  cancel?: string;
  /** spec.status RunCancelled as Tekton's PipelineRun sets it (its flavour's statusMessage). */
  cancelByPipeline?: boolean;
}

/** Tekton's statusMessage when a PipelineRun cancels its runs (CustomRunCancelledByPipelineMsg). */
const pipelineCancelMessage = (kind: RunFlavour) =>
  `${kind} cancelled as the PipelineRun it belongs to has been cancelled.`;

function mkRun(kind: RunFlavour, g: Given): AnyRun {
  const metadata = { name: "x", namespace: "ns", uid: "uid-x", creationTimestamp: exact(0) };
  const fields: Record<string, string> = {};
  if (g.timeout !== undefined) fields.timeout = g.timeout;
  if (g.cancel !== undefined) {
    fields.status = "RunCancelled";
    if (g.cancel) fields.statusMessage = g.cancel;
  }
  if (g.cancelByPipeline) {
    fields.status = "RunCancelled";
    fields.statusMessage = pipelineCancelMessage(kind);
  }
  const ref = g.ref ?? localRef;
  const run: AnyRun =
    kind === "Run"
      ? { apiVersion: "tekton.dev/v1alpha1", kind, metadata, spec: { ref, ...fields } }
      : { apiVersion: "tekton.dev/v1beta1", kind, metadata, spec: { customRef: ref, ...fields } };
  if (g.status) run.status = g.status;
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
/** What a custom-task controller writes first: started at exactly 0, Succeeded=Unknown. */
const running = (extra: RunStatus = {}): RunStatus => ({
  startTime: exact(0),
  conditions: [cond("Unknown", "Running", 0)],
  ...extra,
});

function request(status?: ResolutionRequestStatus): ResolutionRequest {
  const rr: ResolutionRequest = {
    apiVersion: RESOLUTION_V1BETA1,
    kind: RESOLUTION_REQUEST_KIND,
    metadata: { name: REQUEST, namespace: "ns", labels: { [LABEL_RESOLVER_TYPE]: "git" } },
    spec: { params: PARAMS },
  };
  if (status) rr.status = status;
  return rr;
}
const pending = () => request({ conditions: [{ type: "Succeeded", status: "Unknown" }] });
const resolved = (extra: ResolutionRequestStatus = { refSource: REF_SOURCE }) =>
  request({ data: "eA==", conditions: [{ type: "Succeeded", status: "True" }], ...extra });
const failedRequest = (quarryReason?: string) =>
  request({
    ...(quarryReason ? { annotations: { [ANNOTATION_REASON]: quarryReason } } : {}),
    conditions: [
      {
        type: "Succeeded",
        status: "False",
        reason: "ResolutionFailed",
        message: 'path "task/wait.yaml" not found',
      },
    ],
  });

/** The status an enforcement writes: Succeeded=False now, other conditions kept, completionTime now. */
function failedStatus(reason: string, message: string, now: number, others: Condition[] = []) {
  return {
    conditions: [...others, cond("False", reason, now, message)],
    completionTime: at(now),
  };
}

const config = (over: Partial<RunControllerConfig> = {}): RunControllerConfig => ({
  ...defaultRunControllerConfig,
  ...over,
});
const disabledForWait = config({
  kinds: [{ group: "wait.testing.tekton.dev", kind: "Wait", enabled: false }],
});

/** The requeue of an initialised run with the default 60m timeout: just past timeout + grace. */
const timeoutDeadline = (now: number) => HOUR + 1 + GRACE - now;

interface Ctx {
  kind: RunFlavour;
  cancelled: string;
  timedOut: string;
}

interface Row {
  name: string;
  given: Given;
  /** ms after T0 (the run was created at T0). */
  now: number;
  request?: ResolutionRequest;
  cancelSeenAt?: number;
  config?: RunControllerConfig;
  want: (c: Ctx) => RunDecision;
}

/** A cancelled run nobody initialised, ended at the 30 s initial-update timeout. */
const cancelledUninitialised = ({ kind, cancelled }: { kind: string; cancelled: string }) => {
  const message = `${kind} "x" was cancelled`;
  return {
    status: failedStatus(cancelled, message, 30_000),
    enforcement: {
      reason: cancelled,
      message,
      why: `cancel requested and no controller initialised the status of this ${kind} within 30s`,
    },
  };
};

const rows: Row[] = [
  // ---- remote refs ----
  {
    name: "remote ref without a request: create it, record it in childReferences",
    given: { ref: remoteRef() },
    now: 0,
    want: ({ kind }) => ({
      createRequest: {
        namespace: "ns",
        resolverType: "git",
        params: PARAMS,
        owner: {
          apiVersion: kind === "Run" ? "tekton.dev/v1alpha1" : "tekton.dev/v1beta1",
          kind,
          name: "x",
          uid: "uid-x",
        },
        labels: { "quarry.dev/run": "x" },
      },
      status: { childReferences: [REQUEST_CHILD], annotations: REQUEST_NOTE },
      requeueAfterMs: 30_000,
    }),
  },
  {
    name: "remote ref, request pending and recorded: nothing to do but wait",
    given: { ref: remoteRef(), status: RECORDED },
    now: 1_000,
    request: pending(),
    want: () => ({ requeueAfterMs: 29_000 }),
  },
  {
    name: "remote ref: a controller's own children are kept, the request appended once",
    given: { ref: remoteRef(), status: running({ childReferences: [TASKRUN_CHILD] }) },
    now: 1_000,
    request: pending(),
    want: () => ({
      status: { childReferences: [TASKRUN_CHILD, REQUEST_CHILD], annotations: REQUEST_NOTE },
      requeueAfterMs: timeoutDeadline(1_000),
    }),
  },
  {
    name: "resolved request: provenance.refSource recorded",
    given: { ref: remoteRef(), status: running(RECORDED) },
    now: 2_000,
    request: resolved(),
    want: () => ({
      status: {
        provenance: { refSource: REF_SOURCE },
        annotations: { ...REQUEST_NOTE, ...REF_SOURCE_NOTE },
      },
      requeueAfterMs: timeoutDeadline(2_000),
    }),
  },
  {
    name: "resolved request with only the deprecated status.source: recorded as refSource",
    given: { ref: remoteRef(), status: running(RECORDED) },
    now: 2_000,
    request: resolved({ source: REF_SOURCE }),
    want: () => ({
      status: {
        provenance: { refSource: REF_SOURCE },
        annotations: { ...REQUEST_NOTE, ...REF_SOURCE_NOTE },
      },
      requeueAfterMs: timeoutDeadline(2_000),
    }),
  },
  {
    name: "resolved request, provenance already recorded: nothing",
    given: {
      ref: remoteRef(),
      status: running({
        childReferences: [REQUEST_CHILD],
        provenance: { refSource: REF_SOURCE },
        annotations: { ...REQUEST_NOTE, ...REF_SOURCE_NOTE },
      }),
    },
    now: 2_000,
    request: resolved(),
    want: () => ({ requeueAfterMs: timeoutDeadline(2_000) }),
  },
  {
    name: "resolved request, a stale provenance: replaced",
    given: {
      ref: remoteRef(),
      status: running({
        childReferences: [REQUEST_CHILD],
        provenance: { refSource: { ...REF_SOURCE, digest: { sha1: "old" } } },
        annotations: {
          ...REQUEST_NOTE,
          [ANNOTATION_RUN_REF_SOURCE]: JSON.stringify({ ...REF_SOURCE, digest: { sha1: "old" } }),
        },
      }),
    },
    now: 2_000,
    request: resolved(),
    want: () => ({
      status: {
        provenance: { refSource: REF_SOURCE },
        annotations: { ...REQUEST_NOTE, ...REF_SOURCE_NOTE },
      },
      requeueAfterMs: timeoutDeadline(2_000),
    }),
  },
  {
    name: "a CRD schema that pruned childReferences and provenance: the annotations say all is recorded",
    given: { ref: remoteRef(), status: running({ annotations: { ...REQUEST_NOTE, ...REF_SOURCE_NOTE } }) },
    now: 2_000,
    request: resolved(),
    want: () => ({ requeueAfterMs: timeoutDeadline(2_000) }),
  },
  {
    name: "other status.annotations of the run are kept",
    given: { ref: remoteRef(), status: running({ annotations: { "example.dev/note": "kept" } }) },
    now: 2_000,
    request: pending(),
    want: () => ({
      status: {
        childReferences: [REQUEST_CHILD],
        annotations: { "example.dev/note": "kept", ...REQUEST_NOTE },
      },
      requeueAfterMs: timeoutDeadline(2_000),
    }),
  },
  {
    name: "failed request, uninitialised run: ResolutionFailed with the request's quarry.dev/reason and message",
    given: { ref: remoteRef() },
    now: 1_000,
    request: failedRequest("NotFound"),
    want: () => {
      const message = `ResolutionRequest ${REQUEST} failed: NotFound: path "task/wait.yaml" not found`;
      return {
        status: {
          childReferences: [REQUEST_CHILD],
          annotations: REQUEST_NOTE,
          ...failedStatus("ResolutionFailed", message, 1_000),
        },
        enforcement: { reason: "ResolutionFailed", message, why: message },
      };
    },
  },
  {
    name: "failed request without a quarry.dev/reason: the request's message alone",
    given: { ref: remoteRef(), status: RECORDED },
    now: 1_000,
    request: failedRequest(),
    want: () => {
      const message = `ResolutionRequest ${REQUEST} failed: path "task/wait.yaml" not found`;
      return {
        status: failedStatus("ResolutionFailed", message, 1_000),
        enforcement: { reason: "ResolutionFailed", message, why: message },
      };
    },
  },
  {
    name: "failed request, initialised run: no write (its controller reads the failure)",
    given: { ref: remoteRef(), status: running(RECORDED) },
    now: 1_000,
    request: failedRequest("NotFound"),
    want: () => ({ requeueAfterMs: timeoutDeadline(1_000) }),
  },
  {
    name: "a resolver name that is no DNS label, uninitialised run: ResolutionFailed, no request",
    given: { ref: remoteRef("Git_Hub") },
    now: 0,
    want: () => {
      const message = 'resolver "Git_Hub" is not a valid resolver name (a DNS-1123 label)';
      return {
        status: failedStatus("ResolutionFailed", message, 0),
        enforcement: { reason: "ResolutionFailed", message, why: message },
      };
    },
  },

  // ---- TEP-0002 initial-update timeout ----
  {
    name: "uninitialised before the initial-update timeout: requeued for exactly the remaining time",
    given: {},
    now: 10_000,
    want: () => ({ requeueAfterMs: 20_000 }),
  },
  {
    name: "uninitialised 1ms before the initial-update timeout: requeued for 1ms",
    given: {},
    now: 29_999,
    want: () => ({ requeueAfterMs: 1 }),
  },
  {
    name: "uninitialised at the initial-update timeout: ControllerNotFound naming kind and apiVersion",
    given: {},
    now: 30_000,
    want: ({ kind }) => {
      const message = `no controller initialised the status of this ${kind} within 30s: nothing handles ${TARGET}`;
      return {
        status: failedStatus("ControllerNotFound", message, 30_000),
        enforcement: { reason: "ControllerNotFound", message, why: message },
      };
    },
  },
  {
    name: "ControllerNotFound keeps the run's other conditions",
    given: { status: { conditions: [READY] } },
    now: 45_000,
    want: ({ kind }) => {
      const message = `no controller initialised the status of this ${kind} within 30s: nothing handles ${TARGET}`;
      return {
        status: failedStatus("ControllerNotFound", message, 45_000, [READY]),
        enforcement: { reason: "ControllerNotFound", message, why: message },
      };
    },
  },
  {
    name: "the kind's own initial-update timeout",
    given: {},
    now: 5_000,
    config: config({ kinds: [{ kind: "Wait", initialUpdateTimeoutMs: 5_000 }] }),
    want: ({ kind }) => {
      const message = `no controller initialised the status of this ${kind} within 5s: nothing handles ${TARGET}`;
      return {
        status: failedStatus("ControllerNotFound", message, 5_000),
        enforcement: { reason: "ControllerNotFound", message, why: message },
      };
    },
  },

  // ---- cancel ----
  {
    name: "cancel requested, within the grace period: no write, requeued at cancelSeenAt + grace",
    given: { status: running(), cancelByPipeline: true },
    now: 39_999,
    cancelSeenAt: 10_000,
    want: () => ({ requeueAfterMs: 1 }),
  },
  {
    name: "cancel requested, grace over: Tekton's cancelled reason, message = spec.statusMessage",
    given: {
      status: running({ conditions: [READY, cond("Unknown", "Running", 0)] }),
      cancelByPipeline: true,
    },
    now: 40_000,
    cancelSeenAt: 10_000,
    want: ({ kind, cancelled }) => {
      const message = pipelineCancelMessage(kind);
      return {
        status: failedStatus(cancelled, message, 40_000, [READY]),
        enforcement: {
          reason: cancelled,
          message,
          why: `cancel requested and the controller of ${TARGET} did not stop the run within 30s`,
        },
      };
    },
  },
  {
    name: "cancel requested without statusMessage: a message naming the run",
    given: { status: running(), cancel: "" },
    now: 40_000,
    cancelSeenAt: 10_000,
    want: ({ kind, cancelled }) => {
      const message = `${kind} "x" was cancelled`;
      return {
        status: failedStatus(cancelled, message, 40_000),
        enforcement: {
          reason: cancelled,
          message,
          why: `cancel requested and the controller of ${TARGET} did not stop the run within 30s`,
        },
      };
    },
  },
  {
    name: "cancel of a run nobody initialised, grace not over at the initial-update timeout: cancelled, not ControllerNotFound",
    given: { cancel: "" },
    now: 30_000,
    cancelSeenAt: 29_000,
    want: cancelledUninitialised,
  },
  {
    name: "cancel of a run nobody initialised, never seen by this process: cancelled at the initial-update timeout",
    given: { cancel: "" },
    now: 30_000,
    want: cancelledUninitialised,
  },
  {
    name: "cancel of a run nobody initialised: cancelled once its grace is over (before ControllerNotFound)",
    given: { cancel: "" },
    now: 5_000,
    cancelSeenAt: 0,
    config: config({ kinds: [{ kind: "Wait", graceMs: 5_000 }] }),
    want: ({ kind, cancelled }) => {
      const message = `${kind} "x" was cancelled`;
      return {
        status: failedStatus(cancelled, message, 5_000),
        enforcement: {
          reason: cancelled,
          message,
          why: `cancel requested and the controller of ${TARGET} did not stop the run within 5s`,
        },
      };
    },
  },
  {
    name: "cancel requested but not yet seen: no cancel deadline",
    given: { status: running(), cancel: "" },
    now: 40_000,
    want: () => ({ requeueAfterMs: timeoutDeadline(40_000) }),
  },

  // ---- timeout ----
  {
    name: "timeout 1s: at exactly timeout + grace not yet (Tekton: strictly after)",
    given: { status: running(), timeout: "1s" },
    now: 31_000,
    want: () => ({ requeueAfterMs: 1 }),
  },
  {
    // a whole-second stamp counts from the end of its second, as the SDK counts an attempt:
    // the enforcer never falls due before a working controller would time the run out itself
    name: "timeout 1s, startTime in whole seconds: not yet at 31.001s, counted from the second's end",
    given: { status: running({ startTime: at(0) }), timeout: "1s" },
    now: 31_001,
    want: () => ({ requeueAfterMs: 1000 }),
  },
  {
    name: "timeout 1s: strictly after timeout + grace, Tekton's timed-out reason and message",
    given: { status: running(), timeout: "1s" },
    now: 31_001,
    want: ({ kind, timedOut }) => {
      const message = `${kind} "x" failed to finish within "1s"`;
      return {
        status: failedStatus(timedOut, message, 31_001),
        enforcement: {
          reason: timedOut,
          message,
          why: `timed out and the controller of ${TARGET} did not end the run within 30s`,
        },
      };
    },
  },
  {
    name: "timeout unset: the configured default-timeout applies",
    given: { status: running() },
    now: 40_001,
    config: config({ defaultTimeoutMs: 10_000 }),
    want: ({ kind, timedOut }) => {
      const message = `${kind} "x" failed to finish within "10s"`;
      return {
        status: failedStatus(timedOut, message, 40_001),
        enforcement: {
          reason: timedOut,
          message,
          why: `timed out and the controller of ${TARGET} did not end the run within 30s`,
        },
      };
    },
  },
  {
    name: "timeout unset, before the default: requeued for just past it",
    given: { status: running() },
    now: 40_000,
    config: config({ defaultTimeoutMs: 10_000 }),
    want: () => ({ requeueAfterMs: 1 }),
  },
  {
    name: 'timeout "0s": never times out, no deadline',
    given: { status: running(), timeout: "0s" },
    now: 30 * 24 * HOUR,
    want: () => ({}),
  },
  {
    name: "a malformed timeout is the controller's to report: no enforcement, no deadline",
    given: { status: running(), timeout: "soon" },
    now: 2 * HOUR,
    want: () => ({}),
  },
  {
    name: "initialised without startTime: no timeout deadline",
    given: { status: { conditions: [cond("Unknown", "Started", 0)] } },
    now: 2 * HOUR,
    want: () => ({}),
  },

  // ---- done runs ----
  {
    name: "a done run never gets an enforcement, however late its cancel or timeout",
    given: {
      status: { ...running(), conditions: [cond("True", "Succeeded", 500)], completionTime: at(500) },
      timeout: "1s",
      cancel: "",
    },
    now: 10 * HOUR,
    cancelSeenAt: 0,
    want: () => ({}),
  },
  {
    name: "a done run whose request failed: left as its controller ended it",
    given: {
      ref: remoteRef(),
      status: { ...RECORDED, conditions: [cond("False", "Failed", 500, "boom")] },
    },
    now: 10 * HOUR,
    request: failedRequest("NotFound"),
    want: () => ({}),
  },
  {
    name: "a done run with a remote ref and no request: none created, none recorded",
    given: { ref: remoteRef(), status: { conditions: [cond("True", "Succeeded", 500)] } },
    now: 1_000,
    want: () => ({}),
  },

  // ---- enforcement disabled ----
  {
    name: "enforcement disabled for the kind: no conditions ever, childReferences still recorded",
    given: { ref: remoteRef() },
    now: 10 * HOUR,
    config: disabledForWait,
    want: ({ kind }) => ({
      createRequest: {
        namespace: "ns",
        resolverType: "git",
        params: PARAMS,
        owner: {
          apiVersion: kind === "Run" ? "tekton.dev/v1alpha1" : "tekton.dev/v1beta1",
          kind,
          name: "x",
          uid: "uid-x",
        },
        labels: { "quarry.dev/run": "x" },
      },
      status: { childReferences: [REQUEST_CHILD], annotations: REQUEST_NOTE },
    }),
  },
  {
    name: "enforcement disabled for the kind: a failed request is left to the run's controller",
    given: { ref: remoteRef() },
    now: 1_000,
    request: failedRequest("NotFound"),
    config: disabledForWait,
    want: () => ({ status: { childReferences: [REQUEST_CHILD], annotations: REQUEST_NOTE } }),
  },
  {
    name: "enforcement disabled for the kind: cancel and timeout are not enforced",
    given: { status: running(), timeout: "1s", cancel: "" },
    now: 10 * HOUR,
    cancelSeenAt: 0,
    config: disabledForWait,
    want: () => ({}),
  },
  {
    name: "enforcement disabled globally",
    given: {},
    now: 10 * HOUR,
    config: config({ defaults: { ...defaultRunControllerConfig.defaults, enabled: false } }),
    want: () => ({}),
  },
  {
    name: "enforcement disabled globally, enabled for the kind",
    given: {},
    now: 30_000,
    config: config({
      defaults: { ...defaultRunControllerConfig.defaults, enabled: false },
      kinds: [{ kind: "Wait", enabled: true }],
    }),
    want: ({ kind }) => {
      const message = `no controller initialised the status of this ${kind} within 30s: nothing handles ${TARGET}`;
      return {
        status: failedStatus("ControllerNotFound", message, 30_000),
        enforcement: { reason: "ControllerNotFound", message, why: message },
      };
    },
  },
];

/** The run after its status change landed (a JSON merge patch of status; null removes). */
function applied(run: AnyRun, decision: RunDecision): AnyRun {
  const status: Record<string, unknown> = { ...run.status };
  for (const [k, v] of Object.entries(decision.status ?? {})) {
    if (v === null) delete status[k];
    else status[k] = structuredClone(v);
  }
  return { ...run, status } as AnyRun;
}

for (const row of rows) {
  for (const kind of ["Run", "CustomRun"] as const) {
    test(`decide (${kind}): ${row.name}`, () => {
      const run = mkRun(kind, row.given);
      const world: RunWorld = {
        now: T0 + row.now,
        config: row.config ?? defaultRunControllerConfig,
        request: row.request,
        cancelSeenAt: row.cancelSeenAt === undefined ? undefined : T0 + row.cancelSeenAt,
      };
      const decision = decide(run, world);
      // a key present but undefined means the same as an absent one
      for (const [k, v] of Object.entries(decision))
        if (v === undefined) delete decision[k as keyof RunDecision];
      const reasons = RUN_REASONS[kind];
      const want = row.want({ kind, cancelled: reasons.cancelled, timedOut: reasons.timedOut });
      assert.deepEqual(decision, want);

      // idempotent: once the status landed and the request exists, nothing more is decided
      const after = applied(run, decision);
      const request = world.request ?? (decision.createRequest && buildRequest(decision.createRequest));
      const again = decide(after, { ...world, request });
      assert.equal(again.createRequest, undefined, "a second request");
      assert.equal(again.status, undefined, "a second status write");
      assert.equal(again.enforcement, undefined, "a second enforcement");
    });
  }
}

test("the created request: Tekton's deterministic name, the run as controller owner, labelled with the run", () => {
  for (const kind of ["Run", "CustomRun"] as const) {
    const run = mkRun(kind, { ref: remoteRef() });
    const decision = decide(run, {
      now: T0,
      config: defaultRunControllerConfig,
      request: undefined,
      cancelSeenAt: undefined,
    });
    assert.ok(decision.createRequest, kind);
    const rr = buildRequest(decision.createRequest);
    assert.equal(rr.metadata.name, REQUEST, kind);
    assert.equal(rr.metadata.namespace, "ns");
    assert.deepEqual(rr.metadata.ownerReferences, [
      {
        apiVersion: run.apiVersion,
        kind,
        name: "x",
        uid: "uid-x",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(rr.metadata.labels, { "quarry.dev/run": "x", [LABEL_RESOLVER_TYPE]: "git" });
    assert.deepEqual(rr.spec, { params: PARAMS });
    assert.equal(decision.status?.childReferences?.[0]?.name, rr.metadata.name);
  }
});

test("a whole-second creationTimestamp counts from the end of its second: the timeout is never cut short", () => {
  for (const kind of ["Run", "CustomRun"] as const) {
    const run = mkRun(kind, {});
    run.metadata = { ...run.metadata, creationTimestamp: at(0) }; // created somewhere in [T0, T0+1s)
    const world = (now: number): RunWorld => ({
      now: T0 + now,
      config: defaultRunControllerConfig,
      request: undefined,
      cancelSeenAt: undefined,
    });
    assert.deepEqual(decide(run, world(0)), { requeueAfterMs: 31_000 }, kind);
    assert.deepEqual(decide(run, world(30_999)), { requeueAfterMs: 1 }, kind);
    assert.equal(decide(run, world(31_000)).enforcement?.reason, "ControllerNotFound", kind);
  }
});

// ---- cancelRequestedAt ----

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  apiVersion?: string;
  time?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
}

const created: ManagedFieldsEntry = {
  manager: "kubectl-create",
  operation: "Update",
  time: at(0),
  fieldsType: "FieldsV1",
  fieldsV1: { "f:spec": { ".": {}, "f:customRef": {}, "f:params": {} } },
};
const cancelledBy = (manager: string, time: string | undefined): ManagedFieldsEntry => ({
  manager,
  operation: "Update",
  ...(time === undefined ? {} : { time }),
  fieldsType: "FieldsV1",
  fieldsV1: { "f:spec": { "f:status": {}, "f:statusMessage": {} } },
});
const statusWrite = (time: string): ManagedFieldsEntry => ({
  manager: "wait-task-controller",
  operation: "Update",
  subresource: "status",
  time,
  fieldsType: "FieldsV1",
  fieldsV1: { "f:status": { "f:conditions": {} }, "f:spec": { "f:status": {} } },
});

interface CancelRow {
  name: string;
  managedFields: ManagedFieldsEntry[] | undefined;
  want: number | undefined;
}

const cancelRows: CancelRow[] = [
  { name: "no managedFields: unknown", managedFields: undefined, want: undefined },
  { name: "empty managedFields: unknown", managedFields: [], want: undefined },
  { name: "nobody owns spec.status: unknown", managedFields: [created], want: undefined },
  {
    name: "the entry owning spec.status gives the time, a whole-second one from the end of its second",
    managedFields: [created, cancelledBy("pipelinerun-controller", at(5_000))],
    want: T0 + 6_000,
  },
  {
    name: "a time with a fraction is taken as it is",
    managedFields: [created, cancelledBy("pipelinerun-controller", exact(5_250))],
    want: T0 + 5_250,
  },
  {
    name: "status-subresource entries are ignored, whatever they list",
    managedFields: [created, cancelledBy("pipelinerun-controller", at(5_000)), statusWrite(at(9_000))],
    want: T0 + 6_000,
  },
  {
    name: "several entries own spec.status: the latest",
    managedFields: [
      cancelledBy("kubectl-patch", at(7_000)),
      cancelledBy("pipelinerun-controller", at(5_000)),
    ],
    want: T0 + 8_000,
  },
  {
    name: "an entry without a time is skipped",
    managedFields: [
      cancelledBy("kubectl-patch", undefined),
      cancelledBy("pipelinerun-controller", at(5_000)),
    ],
    want: T0 + 6_000,
  },
];

for (const row of cancelRows) {
  test(`cancelRequestedAt: ${row.name}`, () => {
    const run = mkRun("CustomRun", { cancel: "" });
    if (row.managedFields) {
      const metadata = { ...run.metadata, managedFields: row.managedFields };
      run.metadata = metadata;
    }
    assert.equal(cancelRequestedAt(run), row.want);
  });
}
