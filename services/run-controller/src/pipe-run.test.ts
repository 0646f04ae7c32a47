import assert from "node:assert/strict";
import { test } from "node:test";
import { type AnyRun, type Param, type ResolutionRequest, requestNameFor } from "@quarry/api";
import type { Step } from "@quarry/customtask-sdk";
import { PIPE_RESOLVER_TYPE, pipeRequestFor, pipeStep, ReasonInvalidPipeRun } from "./pipe-run.ts";

const REF = { apiVersion: "quarry.dev/v1alpha1", kind: "Pipe", name: "make-cert" };

function pipeRun(
  o: { kind?: "Run" | "CustomRun"; ref?: Record<string, unknown>; embedded?: boolean; params?: Param[] } = {},
): AnyRun {
  const kind = o.kind ?? "CustomRun";
  const spec: Record<string, unknown> = {};
  if (o.embedded)
    spec[kind === "Run" ? "spec" : "customSpec"] = { apiVersion: REF.apiVersion, kind: "Pipe", spec: {} };
  else spec[kind === "Run" ? "ref" : "customRef"] = o.ref ?? REF;
  if (o.params) spec.params = o.params;
  return {
    apiVersion: kind === "Run" ? "tekton.dev/v1alpha1" : "tekton.dev/v1beta1",
    kind,
    metadata: { name: "certs", namespace: "ns", uid: "uid-certs", generation: 1 },
    spec,
  } as AnyRun;
}

test("pipeRequestFor: `pipe: <ref name>` then the run's params, owned and labelled by the run", () => {
  const params = [{ name: "cn", value: "example.com" }];
  const plan = pipeRequestFor(pipeRun({ params }), 1);
  assert.ok(plan.ok);
  const wantParams = [{ name: "pipe", value: "make-cert" }, ...params];
  assert.deepEqual(plan.input, {
    namespace: "ns",
    resolverType: "pipe",
    params: wantParams,
    baseName: "certs",
    owner: { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", name: "certs", uid: "uid-certs" },
    labels: { "quarry.dev/run": "certs" },
  });
  // Tekton's deterministic scheme over the run's name, so a restarted controller lands on it again
  assert.equal(
    plan.name,
    requestNameFor({
      resolverType: PIPE_RESOLVER_TYPE,
      namespace: "ns",
      name: "certs",
      spec: { params: wantParams },
    }),
  );
  assert.match(plan.name, /^pipe-[0-9a-f]+$/);
});

test("pipeRequestFor: each attempt asks afresh under a name of its own", () => {
  const names = [1, 2, 3].map((attempt) => {
    const plan = pipeRequestFor(pipeRun(), attempt);
    assert.ok(plan.ok);
    return plan.name;
  });
  assert.equal(new Set(names).size, 3);
  const again = pipeRequestFor(pipeRun(), 2);
  assert.ok(again.ok);
  assert.equal(again.name, names[1], "stable per attempt");
  assert.equal(again.input.baseName, "certs-attempt-2");
});

test("pipeRequestFor: a spec that names no Pipe fails the run, naming the field", () => {
  const rows: { name: string; run: AnyRun; reason: string; message: RegExp }[] = [
    {
      name: "embedded spec",
      run: pipeRun({ embedded: true }),
      reason: ReasonInvalidPipeRun,
      message: /names a Pipe in spec\.customRef\.name; an embedded spec\.customSpec is not supported/,
    },
    {
      name: "embedded spec (Run)",
      run: pipeRun({ kind: "Run", embedded: true }),
      reason: ReasonInvalidPipeRun,
      message: /names a Pipe in spec\.ref\.name; an embedded spec\.spec is not supported/,
    },
    {
      name: "no name",
      run: pipeRun({ ref: { apiVersion: REF.apiVersion, kind: "Pipe" } }),
      reason: ReasonInvalidPipeRun,
      message: /spec\.customRef\.name must name a Pipe in namespace ns/,
    },
    {
      name: "a remote resolver",
      run: pipeRun({ ref: { ...REF, resolver: "git", params: [] } }),
      reason: ReasonInvalidPipeRun,
      message: /spec\.customRef\.resolver is set/,
    },
    {
      name: "a param the resolver owns",
      run: pipeRun({ params: [{ name: "files", value: "[]" }] }),
      reason: "InvalidParams",
      message: /param "files" is the pipe resolver's own/,
    },
  ];
  for (const row of rows) {
    const plan = pipeRequestFor(row.run, 1);
    assert.ok(!plan.ok, row.name);
    assert.equal(plan.reason, row.reason, row.name);
    assert.match(plan.message, row.message, row.name);
  }
});

function request(status?: ResolutionRequest["status"]): ResolutionRequest {
  const rr: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "pipe-abc", namespace: "ns" },
    spec: { params: [] },
  };
  if (status) rr.status = status;
  return rr;
}

const failedWith = (quarryReason: string | undefined, message = "it broke"): ResolutionRequest =>
  request({
    conditions: [{ type: "Succeeded", status: "False", reason: "ResolutionFailed", message }],
    ...(quarryReason ? { annotations: { "quarry.dev/reason": quarryReason } } : {}),
  });

const resolvedWith = (yamlText: string): ResolutionRequest =>
  request({
    conditions: [{ type: "Succeeded", status: "True" }],
    data: Buffer.from(yamlText).toString("base64"),
  });

test("pipeStep: what the run is, given its attempt's request", () => {
  const rows: { name: string; rr: ResolutionRequest; want: Step }[] = [
    {
      name: "not picked up yet",
      rr: request(),
      want: { type: "running", message: "waiting for ResolutionRequest pipe-abc" },
    },
    {
      name: "the resolver's progress is passed on",
      rr: request({
        conditions: [
          {
            type: "Succeeded",
            status: "Unknown",
            reason: "ResolutionInProgress",
            message: "waiting for pod p",
          },
        ],
      }),
      want: { type: "running", message: "waiting for ResolutionRequest pipe-abc: waiting for pod p" },
    },
    {
      name: "resolved: a result per key, naming the object",
      rr: resolvedWith(
        "- {key: tls-crt, kind: Secret, name: certs-make-cert-tls-crt, sha256: aa}\n- {key: conf, kind: ConfigMap, name: certs-make-cert-conf, sha256: bb}\n",
      ),
      want: {
        type: "succeeded",
        reason: "Succeeded",
        message: "stored Secret certs-make-cert-tls-crt, ConfigMap certs-make-cert-conf",
        results: [
          { name: "tls-crt", value: "certs-make-cert-tls-crt" },
          { name: "conf", value: "certs-make-cert-conf" },
        ],
      },
    },
    {
      name: "resolved with data that is not the pipe list",
      rr: resolvedWith("kind: Task\n"),
      want: {
        type: "failed",
        reason: "InvalidPipeResult",
        message:
          "ResolutionRequest pipe-abc resolved, but its data is not a list of {key, kind, name, sha256}",
        retryable: false,
      },
    },
    {
      name: "a pod that failed is worth another attempt",
      rr: failedWith("PodFailed", "pod p: init container make: ImagePullBackOff"),
      want: {
        type: "failed",
        reason: "PodFailed",
        message: "ResolutionRequest pipe-abc failed: pod p: init container make: ImagePullBackOff",
        retryable: true,
      },
    },
    {
      name: "the global timeout is worth another attempt",
      rr: request({
        conditions: [
          { type: "Succeeded", status: "False", reason: "ResolutionTimedOut", message: "timed out" },
        ],
      }),
      want: {
        type: "failed",
        reason: "ResolutionTimedOut",
        message: "ResolutionRequest pipe-abc failed: timed out",
        retryable: true,
      },
    },
    ...[
      "InvalidPipe",
      "PipeNotFound",
      "StrategyNotFound",
      "InvalidStrategy",
      "InvalidParams",
      "OutputConflict",
      "TooLarge",
    ].map((reason) => ({
      name: `${reason} is final`,
      rr: failedWith(reason),
      want: {
        type: "failed" as const,
        reason,
        message: "ResolutionRequest pipe-abc failed: it broke",
        retryable: false,
      },
    })),
  ];
  // a run that already records the request: the step is the request's alone
  const recorded = pipeRun();
  recorded.status = { childReferences: [CHILD("pipe-abc")] };
  for (const row of rows) assert.deepEqual(pipeStep(recorded, row.rr), row.want, row.name);
});

const CHILD = (name: string) => ({
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  name,
});

test("pipeStep: the attempt's request joins the run's childReferences, earlier attempts' kept", () => {
  assert.deepEqual(pipeStep(pipeRun(), request()).childReferences, [CHILD("pipe-abc")]);
  const retried = pipeRun();
  const other = { apiVersion: "v1", kind: "Pod", name: "p" };
  retried.status = { childReferences: [CHILD("pipe-first"), other] };
  assert.deepEqual(pipeStep(retried, failedWith("PodFailed")).childReferences, [
    CHILD("pipe-first"),
    other,
    CHILD("pipe-abc"),
  ]);
});
