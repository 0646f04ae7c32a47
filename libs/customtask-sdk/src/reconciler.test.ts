// Table tests of TaskReconciler's writes (knative style): given a run in the
// informer's cache and in the apiserver, exactly these patches (each under the
// resourceVersion it was computed from), Events, task calls and requeue.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AnyRun,
  type Condition,
  customRuns,
  type Param,
  type ResolutionRequest,
  type RunStatus,
  resolutionRequests,
  runs,
} from "@quarry/api";
import { MapLister, type ReconcileOutcome } from "@quarry/kube";
import { type FakeAction, FakeEventRecorder, FakeKubeClient, type RecordedEvent } from "@quarry/kube/testing";
import { createLogger } from "@quarry/observability";
import { buildRequest } from "@quarry/requester";
import { TaskReconciler } from "./reconciler.ts";
import { remoteRequest } from "./remote.ts";
import type { CustomTask, DeclaredParam, Step, TaskContext } from "./task.ts";

const log = createLogger({ service: "test", level: "silent" });
const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/**
 * When an attempt stamped `at(ms)` counts as started: startTime is written in whole seconds, and
 * the SDK counts from the end of that second, so a wait or a timeout never ends early.
 */
const counted = (ms: number) => T0 + Math.floor(ms / 1000) * 1000 + 1000;
const HOUR = 3_600_000;
const PIPELINE_CANCEL_MSG = "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.";
const GIT_PARAMS: Param[] = [
  { name: "url", value: "https://example.com/tasks.git" },
  { name: "pathInRepo", value: "sleep.yaml" },
];

/** A task whose reconcile is the row's script; it remembers what the SDK handed it. */
class ScriptedTask implements CustomTask {
  readonly group = "example.dev";
  readonly kind = "Sleep";
  readonly invocations: TaskContext[] = [];
  readonly stops: string[] = [];
  params?: DeclaredParam[];
  private readonly script: (ctx: TaskContext) => Step | Promise<Step>;
  constructor(script: (ctx: TaskContext) => Step | Promise<Step>) {
    this.script = script;
  }
  reconcile(ctx: TaskContext): Step | Promise<Step> {
    this.invocations.push(ctx);
    return this.script(ctx);
  }
  stop(_ctx: TaskContext, why: "cancelled" | "timedOut"): void {
    this.stops.push(why);
  }
}

interface RunOpts {
  kind?: "Run" | "CustomRun";
  status?: RunStatus;
  timeout?: string;
  retries?: number;
  cancel?: string;
  resolver?: string;
  targetKind?: string;
  params?: Param[];
}

function mkRun(o: RunOpts = {}): AnyRun {
  const kind = o.kind ?? "CustomRun";
  const ref: Record<string, unknown> = { apiVersion: "example.dev/v1", kind: o.targetKind ?? "Sleep" };
  if (o.resolver) Object.assign(ref, { resolver: o.resolver, params: GIT_PARAMS });
  const spec: Record<string, unknown> = { [kind === "Run" ? "ref" : "customRef"]: ref };
  if (o.timeout) spec.timeout = o.timeout;
  if (o.retries) spec.retries = o.retries;
  if (o.params) spec.params = o.params;
  if (o.cancel !== undefined) Object.assign(spec, { status: "RunCancelled", statusMessage: o.cancel });
  const run = {
    apiVersion: kind === "Run" ? "tekton.dev/v1alpha1" : "tekton.dev/v1beta1",
    kind,
    metadata: { name: "w", namespace: "ns", uid: "uid-w", generation: 1 },
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

/** Started at T0 and running (as after the SDK's first write). */
const started = (extra: RunStatus = {}): RunStatus => ({
  startTime: at(0),
  conditions: [cond("Unknown", "Running", 0)],
  ...extra,
});

function statusPatch(
  rv: string,
  status: Record<string, unknown>,
  o: { runs?: boolean; error?: number } = {},
) {
  const action: FakeAction = {
    verb: "patch",
    resource: o.runs ? "runs" : "customruns",
    namespace: "ns",
    name: "w",
    subresource: "status",
    body: { status, metadata: { resourceVersion: rv } },
  };
  if (o.error !== undefined) action.error = o.error;
  return action;
}

const event = (type: "Normal" | "Warning", reason: string, message: string): RecordedEvent => ({
  object: "ns/w",
  type,
  reason,
  message,
});

interface Harness {
  client: FakeKubeClient;
  stored: AnyRun;
}

interface Row {
  name: string;
  /** In the apiserver (seeded: resourceVersion "1") and, unless `cached` says otherwise, in the cache. */
  given: AnyRun;
  /** The cache's copy when it differs (lagging behind, or the run already gone from the apiserver). */
  cached?: (stored: AnyRun) => AnyRun;
  /** Only in the cache: the apiserver no longer has it. */
  deleted?: boolean;
  requests?: ResolutionRequest[];
  /** What the task declares (the SDK checks the run's params against it). */
  params?: DeclaredParam[];
  script?: (ctx: TaskContext) => Step | Promise<Step>;
  elapsedMs: number;
  /** Hooks on the apiserver before reconciling (injected failures, racing writers). */
  arrange?: (h: Harness) => void;
  wantActions: FakeAction[];
  wantEvents?: RecordedEvent[];
  wantOutcome?: ReconcileOutcome;
  wantStops?: string[];
  wantInvocations?: number;
  /** Further checks of the stored run and of what the task saw. */
  check?: (h: Harness & { task: ScriptedTask }) => void;
}

const sleeping: Row["script"] = () => ({ type: "running", message: "sleeping", requeueAfterMs: 5000 });

/** Seeds `run` over the stored one the way another writer would (status included). */
function overwrite(h: Harness, change: (run: AnyRun) => void): void {
  const next = structuredClone(
    h.client.object<AnyRun>(h.stored.kind === "Run" ? runs : customRuns, "ns", "w")!,
  );
  change(next);
  h.client.seed(next.kind === "Run" ? runs : customRuns, next);
}

/** Lets the first status patch through only after `change` landed in between (a racing writer). */
function raceFirstPatch(h: Harness, change: (run: AnyRun) => void): void {
  let raced = false;
  h.client.react((call) => {
    if (call.verb === "patch" && call.subresource === "status" && !raced) {
      raced = true;
      overwrite(h, change);
    }
    return undefined;
  });
}

const rows: Row[] = [
  {
    name: "a new CustomRun: its start and the task's step are one write, its wake-up requeued",
    given: mkRun(),
    script: sleeping,
    elapsedMs: 0,
    wantActions: [
      statusPatch("1", { startTime: at(0), conditions: [cond("Unknown", "Running", 0, "sleeping")] }),
    ],
    wantOutcome: { requeueAfterMs: 5000 },
    wantInvocations: 1,
    check: ({ client, task }) => {
      const ctx = task.invocations[0]!;
      assert.equal(ctx.startedAt, counted(0), "counted from the end of startTime's second");
      assert.equal(ctx.attempt, 1);
      assert.equal(ctx.timeoutMs, HOUR);
      assert.equal(ctx.run.status?.startTime, at(0), "the task sees the run as started");
      assert.equal(ctx.run.status?.conditions?.[0]?.reason, "Started");
      assert.equal(client.object<AnyRun>(customRuns, "ns", "w")?.metadata.resourceVersion, "2");
    },
  },
  {
    name: "a new run with a bad param: started and failed in one write",
    given: mkRun({ params: [{ name: "seconds", value: ["5"] }] }),
    params: [{ name: "seconds", type: "string" }],
    elapsedMs: 0,
    wantActions: [
      statusPatch("1", {
        startTime: at(0),
        conditions: [
          cond("False", "InvalidParamType", 0, 'param "seconds" is declared string, but was given an array'),
        ],
        completionTime: at(0),
      }),
    ],
    wantEvents: [
      event("Warning", "InvalidParamType", 'param "seconds" is declared string, but was given an array'),
    ],
    wantInvocations: 0,
  },
  {
    name: "a new run the task fails at once: started and failed in one write",
    given: mkRun(),
    script: () => ({ type: "failed", reason: "InvalidDuration", message: "bad", retryable: false }),
    elapsedMs: 0,
    wantActions: [
      statusPatch("1", {
        startTime: at(0),
        conditions: [cond("False", "InvalidDuration", 0, "bad")],
        completionTime: at(0),
      }),
    ],
    wantEvents: [event("Warning", "InvalidDuration", "bad")],
    wantInvocations: 1,
  },
  {
    name: "a run cancelled before it started: started and cancelled in one write, the task stopped",
    given: mkRun({ cancel: PIPELINE_CANCEL_MSG }),
    script: sleeping,
    elapsedMs: 0,
    wantActions: [
      statusPatch("1", {
        startTime: at(0),
        conditions: [cond("False", "CustomRunCancelled", 0, PIPELINE_CANCEL_MSG)],
        completionTime: at(0),
      }),
    ],
    wantEvents: [event("Normal", "CustomRunCancelled", PIPELINE_CANCEL_MSG)],
    wantStops: ["cancelled"],
    wantInvocations: 0,
  },
  {
    name: "a Run is written through runs/status",
    given: mkRun({ kind: "Run" }),
    script: sleeping,
    elapsedMs: 0,
    wantActions: [
      statusPatch(
        "1",
        { startTime: at(0), conditions: [cond("Unknown", "Running", 0, "sleeping")] },
        { runs: true },
      ),
    ],
    wantOutcome: { requeueAfterMs: 5000 },
  },
  {
    name: "nothing changed: no write, requeued just past the timeout",
    given: mkRun({ timeout: "10s", status: started() }),
    script: () => ({ type: "running" }),
    elapsedMs: 4000,
    wantActions: [],
    // 10s counted from the end of startTime's second (T0 + 1s), not from T0
    wantOutcome: { requeueAfterMs: 7001 },
  },
  {
    name: "a startTime with a fraction counts from that instant",
    given: mkRun({ timeout: "10s", status: started({ startTime: "2026-01-01T00:00:00.123Z" }) }),
    script: () => ({ type: "running" }),
    elapsedMs: 4000,
    wantActions: [],
    wantOutcome: { requeueAfterMs: 10_000 - (4000 - 123) + 1 },
    check: ({ task }) => assert.equal(task.invocations[0]!.startedAt, T0 + 123),
  },
  {
    name: "a startTime with a fraction times out right after it",
    given: mkRun({ timeout: "10s", status: started({ startTime: "2026-01-01T00:00:00.123Z" }) }),
    script: sleeping,
    elapsedMs: 10_124,
    wantActions: [
      statusPatch("1", {
        conditions: [
          cond("False", "CustomRunTimedOut", 10_124, 'CustomRun "w" failed to finish within "10s"'),
        ],
        completionTime: at(10_124),
      }),
    ],
    wantEvents: [event("Warning", "CustomRunTimedOut", 'CustomRun "w" failed to finish within "10s"')],
    wantStops: ["timedOut"],
    wantInvocations: 0,
  },
  {
    name: "succeeded: results written, a Normal Event, no requeue",
    given: mkRun({ status: started() }),
    script: () => ({
      type: "succeeded",
      reason: "Slept",
      message: "done",
      results: [{ name: "slept", value: "5s" }],
    }),
    elapsedMs: 5000,
    wantActions: [
      statusPatch("1", {
        conditions: [cond("True", "Slept", 5000, "done")],
        completionTime: at(5000),
        results: [{ name: "slept", value: "5s" }],
      }),
    ],
    wantEvents: [event("Normal", "Slept", "done")],
  },
  {
    name: "failed with a retry left: the attempt is kept, the next one starts and runs",
    given: mkRun({ retries: 1, status: started() }),
    script: (ctx) =>
      ctx.attempt === 1 ? { type: "failed", reason: "Flaky", message: "boom" } : { type: "running" },
    elapsedMs: 5000,
    wantActions: [
      statusPatch("1", {
        retriesStatus: [
          { startTime: at(0), conditions: [cond("False", "Flaky", 5000, "boom")], completionTime: at(5000) },
        ],
        startTime: at(5000),
        completionTime: null,
        results: null,
        conditions: [cond("Unknown", "Running", 0, "attempt 2 of 2 after Flaky: boom")],
      }),
      statusPatch("2", { conditions: [cond("Unknown", "Running", 0)] }),
    ],
    wantEvents: [event("Warning", "Flaky", "attempt 1 failed, retrying: boom")],
    // the new attempt counts from the end of its startTime's second
    wantOutcome: { requeueAfterMs: HOUR + 1000 + 1 },
    wantInvocations: 2,
    check: ({ task }) => {
      assert.equal(task.invocations[1]!.attempt, 2);
      assert.equal(task.invocations[1]!.startedAt, counted(5000));
    },
  },
  {
    name: "cancelled by its PipelineRun: CustomRunCancelled with Tekton's message, the task stopped",
    given: mkRun({ cancel: PIPELINE_CANCEL_MSG, status: started() }),
    script: sleeping,
    elapsedMs: 3000,
    wantActions: [
      statusPatch("1", {
        conditions: [cond("False", "CustomRunCancelled", 3000, PIPELINE_CANCEL_MSG)],
        completionTime: at(3000),
      }),
    ],
    wantEvents: [event("Normal", "CustomRunCancelled", PIPELINE_CANCEL_MSG)],
    wantStops: ["cancelled"],
    wantInvocations: 0,
  },
  {
    name: "a Run cancelled without a message: RunCancelled",
    given: mkRun({ kind: "Run", cancel: "", status: started() }),
    elapsedMs: 3000,
    wantActions: [
      statusPatch(
        "1",
        {
          conditions: [cond("False", "RunCancelled", 3000, 'Run "w" was cancelled')],
          completionTime: at(3000),
        },
        { runs: true },
      ),
    ],
    wantEvents: [event("Normal", "RunCancelled", 'Run "w" was cancelled')],
    wantStops: ["cancelled"],
    wantInvocations: 0,
  },
  {
    name: "timed out: CustomRunTimedOut, a Warning Event, the task stopped",
    given: mkRun({ timeout: "10s", status: started() }),
    script: sleeping,
    // startTime T0 counts from T0 + 1s: past 10s at T0 + 11s + 1ms
    elapsedMs: 11_001,
    wantActions: [
      statusPatch("1", {
        conditions: [
          cond("False", "CustomRunTimedOut", 11_001, 'CustomRun "w" failed to finish within "10s"'),
        ],
        completionTime: at(11_001),
      }),
    ],
    wantEvents: [event("Warning", "CustomRunTimedOut", 'CustomRun "w" failed to finish within "10s"')],
    wantStops: ["timedOut"],
    wantInvocations: 0,
  },
  {
    name: "timed out with a retry left: retried, the task stopped, the new attempt runs",
    given: mkRun({ timeout: "10s", retries: 1, status: started() }),
    script: () => ({ type: "running", message: "again" }),
    elapsedMs: 12_000,
    wantActions: [
      statusPatch("1", {
        retriesStatus: [
          {
            startTime: at(0),
            conditions: [
              cond("False", "CustomRunTimedOut", 12_000, 'CustomRun "w" failed to finish within "10s"'),
            ],
            completionTime: at(12_000),
          },
        ],
        startTime: at(12_000),
        completionTime: null,
        results: null,
        conditions: [
          cond(
            "Unknown",
            "Running",
            0,
            'attempt 2 of 2 after CustomRunTimedOut: CustomRun "w" failed to finish within "10s"',
          ),
        ],
      }),
      statusPatch("2", { conditions: [cond("Unknown", "Running", 0, "again")] }),
    ],
    wantEvents: [event("Warning", "CustomRunTimedOut", 'CustomRun "w" failed to finish within "10s"')],
    wantStops: ["timedOut"],
    // the new attempt (stamped 12s) counts from 13s: 11s of its 10s timeout left
    wantOutcome: { requeueAfterMs: 11_001 },
    wantInvocations: 1,
  },
  {
    name: "a done run is left alone",
    given: mkRun({ cancel: "", status: { startTime: at(0), conditions: [cond("True", "Slept", 5000)] } }),
    elapsedMs: 10 * HOUR,
    wantActions: [],
    wantInvocations: 0,
  },
  {
    name: "another task's run is left alone",
    given: mkRun({ targetKind: "Wait" }),
    elapsedMs: 0,
    wantActions: [],
    wantInvocations: 0,
  },
  {
    name: "a conflict on metadata only: the same status, under the latest resourceVersion",
    given: mkRun({ status: started() }),
    script: () => ({ type: "running", message: "sleeping" }),
    arrange: (h) =>
      raceFirstPatch(h, (run) => {
        run.metadata.labels = { touched: "yes" };
      }),
    elapsedMs: 2000,
    wantActions: [
      statusPatch("1", { conditions: [cond("Unknown", "Running", 0, "sleeping")] }, { error: 409 }),
      statusPatch("2", { conditions: [cond("Unknown", "Running", 0, "sleeping")] }),
    ],
    wantOutcome: { requeueAfterMs: HOUR + 1000 - 2000 + 1 },
  },
  {
    name: "a lagging cache: the conflict is recomputed from the latest status, the attempt's start kept",
    given: mkRun({ status: started() }),
    // the cache still holds the run from before it was started
    cached: (stored) => ({ ...structuredClone(stored), status: {} }),
    script: () => ({ type: "running", message: "sleeping" }),
    arrange: (h) =>
      overwrite(h, (run) => {
        run.metadata.labels = { moved: "on" };
      }),
    elapsedMs: 2000,
    wantActions: [
      statusPatch(
        "1",
        { startTime: at(2000), conditions: [cond("Unknown", "Running", 2000, "sleeping")] },
        { error: 409 },
      ),
      statusPatch("2", { conditions: [cond("Unknown", "Running", 0, "sleeping")] }),
    ],
    wantOutcome: { requeueAfterMs: HOUR + 1000 - 2000 + 1 },
    // once with the stale start (that step is never written), once with the stored one
    wantInvocations: 2,
    check: ({ client, task }) => {
      assert.equal(task.invocations[1]!.startedAt, counted(0));
      assert.equal(client.object<AnyRun>(customRuns, "ns", "w")?.status?.startTime, at(0));
    },
  },
  {
    name: "done elsewhere between decision and write: not written",
    given: mkRun({ status: started() }),
    script: () => ({ type: "succeeded", reason: "Slept" }),
    arrange: (h) =>
      raceFirstPatch(h, (run) => {
        run.status = { ...run.status, conditions: [cond("False", "CustomRunTimedOut", 4000, "enforced")] };
      }),
    elapsedMs: 5000,
    wantActions: [
      statusPatch(
        "1",
        { conditions: [cond("True", "Slept", 5000)], completionTime: at(5000) },
        { error: 409 },
      ),
    ],
    wantInvocations: 1,
    check: ({ client }) => {
      const cond0 = client.object<AnyRun>(customRuns, "ns", "w")?.status?.conditions?.[0];
      assert.equal(cond0?.reason, "CustomRunTimedOut");
    },
  },
  {
    name: "cancelled between decision and write (a new generation): not written, the cancel's event reconciles",
    given: mkRun({ status: started() }),
    script: sleeping,
    arrange: (h) =>
      raceFirstPatch(h, (run) => {
        Object.assign(run.spec, { status: "RunCancelled", statusMessage: PIPELINE_CANCEL_MSG });
      }),
    elapsedMs: 1000,
    wantActions: [
      statusPatch("1", { conditions: [cond("Unknown", "Running", 0, "sleeping")] }, { error: 409 }),
    ],
  },
  {
    name: "deleted between decision and write: one 404, nothing more",
    given: mkRun(),
    deleted: true,
    script: sleeping,
    elapsedMs: 0,
    wantActions: [
      statusPatch(
        "1",
        { startTime: at(0), conditions: [cond("Unknown", "Running", 0, "sleeping")] },
        { error: 404 },
      ),
    ],
    wantInvocations: 1,
  },
  {
    name: "a remote definition: the run's request is created, owned by the run, and the run waits",
    given: mkRun({ resolver: "git", status: started() }),
    script: async (ctx) => {
      const ref = await ctx.resolvedRef();
      return { type: "running", message: `definition ${ref.state}` };
    },
    elapsedMs: 1000,
    wantActions: [
      {
        verb: "create",
        resource: "resolutionrequests",
        namespace: "ns",
        name: REMOTE_NAME(),
        subresource: "",
        body: buildRequest(REMOTE_INPUT()),
      },
      statusPatch("1", { conditions: [cond("Unknown", "Running", 0, "definition pending")] }),
    ],
    wantOutcome: { requeueAfterMs: HOUR + 1000 - 1000 + 1 },
    check: ({ client }) => {
      const rr = client.object<ResolutionRequest>(resolutionRequests, "ns", REMOTE_NAME());
      assert.deepEqual(rr?.metadata.ownerReferences, [
        {
          apiVersion: "tekton.dev/v1beta1",
          kind: "CustomRun",
          name: "w",
          uid: "uid-w",
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(rr?.metadata.labels?.["quarry.dev/run"], "w");
    },
  },
  {
    name: "a remote definition already resolved: read from the cache, nothing created",
    given: mkRun({ resolver: "git", status: started() }),
    requests: [resolvedRequest()],
    script: async (ctx) => {
      const ref = await ctx.resolvedRef();
      const object = ref.state === "resolved" ? (ref.object as { spec: { seconds: number } }) : undefined;
      return { type: "succeeded", message: `slept ${object?.spec.seconds}s` };
    },
    elapsedMs: 1000,
    wantActions: [
      statusPatch("1", {
        conditions: [cond("True", "Succeeded", 1000, "slept 3s")],
        completionTime: at(1000),
      }),
    ],
    wantEvents: [event("Normal", "Succeeded", "slept 3s")],
  },
  {
    name: "an invalid resolver name: the task hears InvalidResolver, no request is made",
    given: mkRun({ resolver: "Git_Hub", status: started() }),
    script: async (ctx) => {
      const ref = await ctx.resolvedRef();
      return ref.state === "failed"
        ? { type: "failed", reason: ref.reason, message: ref.message, retryable: false }
        : { type: "running" };
    },
    elapsedMs: 1000,
    wantActions: [
      statusPatch("1", {
        conditions: [
          cond(
            "False",
            "InvalidResolver",
            1000,
            'resolver "Git_Hub" is not a valid resolver name (a DNS-1123 label)',
          ),
        ],
        completionTime: at(1000),
      }),
    ],
    wantEvents: [
      event(
        "Warning",
        "InvalidResolver",
        'resolver "Git_Hub" is not a valid resolver name (a DNS-1123 label)',
      ),
    ],
  },
];

function REMOTE_INPUT() {
  const remote = remoteRequest({ ...mkRun({ resolver: "git" }) });
  if (remote.type !== "request") throw new Error("expected a remote request");
  return remote.input;
}

function REMOTE_NAME(): string {
  return buildRequest(REMOTE_INPUT()).metadata.name!;
}

function resolvedRequest(): ResolutionRequest {
  const rr = buildRequest(REMOTE_INPUT());
  rr.status = {
    conditions: [{ type: "Succeeded", status: "True" }],
    data: Buffer.from("kind: Sleep\nspec:\n  seconds: 3\n").toString("base64"),
  };
  return rr;
}

for (const row of rows) {
  test(row.name, async () => {
    const now = () => T0 + row.elapsedMs;
    const client = new FakeKubeClient({ now });
    const rt = row.given.kind === "Run" ? runs : customRuns;
    const [stored] = client.seed(rt, row.given);
    const harness: Harness = { client, stored: stored! };
    if (row.requests) client.seed(resolutionRequests, ...row.requests);
    if (row.deleted) await client.delete(rt, "ns", "w");
    const cached = row.cached ? row.cached(stored!) : stored!;
    row.arrange?.(harness);
    client.clearActions();

    const task = new ScriptedTask(row.script ?? (() => assert.fail("the task should not be called")));
    if (row.params) task.params = row.params;
    const recorder = new FakeEventRecorder();
    const reconciler = new TaskReconciler({
      task,
      client,
      runs: new MapLister<AnyRun>([cached]),
      requests: new MapLister<ResolutionRequest>(row.requests ?? []),
      recorder,
      log,
      defaultTimeoutMs: () => HOUR,
      stopping: new AbortController().signal,
      now,
    });
    const outcome = await reconciler.reconcile("ns/w");

    assert.deepEqual(client.writes(), row.wantActions, "writes");
    assert.deepEqual(recorder.events, row.wantEvents ?? [], "events");
    assert.deepEqual(outcome, row.wantOutcome, "outcome");
    assert.deepEqual(task.stops, row.wantStops ?? [], "stops");
    if (row.wantInvocations !== undefined)
      assert.equal(task.invocations.length, row.wantInvocations, "invocations");
    row.check?.({ ...harness, task });
  });
}

test("a run missing from the cache is not reconciled", async () => {
  const client = new FakeKubeClient();
  const task = new ScriptedTask(() => assert.fail("the task should not be called"));
  const reconciler = new TaskReconciler({
    task,
    client,
    runs: new MapLister<AnyRun>([]),
    requests: new MapLister<ResolutionRequest>([]),
    recorder: new FakeEventRecorder(),
    log,
    defaultTimeoutMs: () => HOUR,
    stopping: new AbortController().signal,
  });
  assert.equal(await reconciler.reconcile("ns/w"), undefined);
  assert.deepEqual(client.calls, []);
});

test("a failing stop() is logged, never fails the reconcile", async () => {
  const client = new FakeKubeClient({ now: () => T0 + 1000 });
  const [stored] = client.seed(customRuns, mkRun({ cancel: "", status: started() }));
  const task = new ScriptedTask(() => ({ type: "running" }));
  task.stop = () => {
    throw new Error("cleanup exploded");
  };
  const reconciler = new TaskReconciler({
    task,
    client,
    runs: new MapLister<AnyRun>([stored!]),
    requests: new MapLister<ResolutionRequest>([]),
    recorder: new FakeEventRecorder(),
    log,
    defaultTimeoutMs: () => HOUR,
    stopping: new AbortController().signal,
    now: () => T0 + 1000,
  });
  assert.equal(await reconciler.reconcile("ns/w"), undefined);
  assert.equal(
    client.object<AnyRun>(customRuns, "ns", "w")?.status?.conditions?.[0]?.reason,
    "CustomRunCancelled",
  );
});
