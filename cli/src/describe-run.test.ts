import assert from "node:assert/strict";
import { test } from "node:test";
import type { CustomRun, ResolutionRequest, Run } from "@quarry/api";
import { ApiError, type KubeClient } from "@quarry/kube";
import type { CoreEvent } from "./describe.ts";
import { type ChildRequest, describeRun, runDescribeRun } from "./describe-run.ts";

const now = Date.parse("2025-06-01T12:00:10Z");
const SECRET = Buffer.from("kind: Task # secret-ish content").toString("base64");

const failed: CustomRun = {
  apiVersion: "tekton.dev/v1beta1",
  kind: "CustomRun",
  metadata: {
    name: "wait-1",
    namespace: "ci",
    creationTimestamp: "2025-06-01T12:00:00Z",
    labels: { "tekton.dev/pipelineTask": "wait" },
  },
  spec: {
    customRef: {
      apiVersion: "example.dev/v1",
      kind: "Wait",
      resolver: "git",
      params: [
        { name: "url", value: "https://example.com/catalog.git" },
        { name: "pathInRepo", value: "wait.yaml" },
      ],
    },
    params: [
      { name: "duration", value: "5s" },
      { name: "tags", value: ["a", "b"] },
    ],
    retries: 2,
    status: "RunCancelled",
    statusMessage: "stopped by a user",
    timeout: "0s",
  },
  status: {
    startTime: "2025-06-01T12:00:01Z",
    completionTime: "2025-06-01T12:00:04Z",
    conditions: [
      {
        type: "Succeeded",
        status: "False",
        reason: "ResolutionFailed",
        message: "could not resolve wait.yaml",
        lastTransitionTime: "2025-06-01T12:00:04Z",
      },
    ],
    results: [
      { name: "summary", value: "two\nlines" },
      { name: "code", value: "1" },
    ],
    retriesStatus: [
      {
        startTime: "2025-06-01T12:00:01Z",
        completionTime: "2025-06-01T12:00:02Z",
        conditions: [
          { type: "Succeeded", status: "False", reason: "ResolutionFailed", message: "first try" },
        ],
      },
    ],
    childReferences: [
      {
        apiVersion: "resolution.tekton.dev/v1beta1",
        kind: "ResolutionRequest",
        name: "git-abc",
        pipelineTaskName: "wait",
      },
      { apiVersion: "v1", kind: "ConfigMap", name: "wait-1-state" },
    ],
    provenance: {
      refSource: {
        uri: "git+https://example.com/catalog.git",
        digest: { sha1: "abc123" },
        entryPoint: "wait.yaml",
      },
    },
  },
};

const failedRequest: ResolutionRequest = {
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: { name: "git-abc", namespace: "ci" },
  spec: {},
  status: {
    conditions: [
      {
        type: "Succeeded",
        status: "False",
        reason: "ResolutionFailed",
        message: 'path "wait.yaml" not found',
      },
    ],
    annotations: { "quarry.dev/reason": "NotFound" },
    data: SECRET,
  },
};

const event: CoreEvent = {
  metadata: { name: "wait-1.1" },
  type: "Warning",
  reason: "ResolutionFailed",
  message: "could not resolve wait.yaml",
  firstTimestamp: "2025-06-01T12:00:04Z",
  lastTimestamp: "2025-06-01T12:00:04Z",
  source: { component: "run-controller" },
};

test("a failed CustomRun: every section, the reason chain down to its request, no request data", () => {
  const out = describeRun(failed, [{ name: "git-abc", request: failedRequest }], [event], now);
  assert.equal(
    out,
    [
      "Name:              wait-1",
      "Namespace:         ci",
      "Flavour:           CustomRun (tekton.dev/v1beta1)",
      "Labels:            tekton.dev/pipelineTask=wait",
      "Annotations:       <none>",
      "Created:           2025-06-01T12:00:00Z (10s ago)",
      "Target:            Wait (apiVersion example.dev/v1)",
      "Ref:",
      "  API Version:  example.dev/v1",
      "  Kind:         Wait",
      "  Resolver:     git",
      "  Params:",
      "    url:         https://example.com/catalog.git",
      "    pathInRepo:  wait.yaml",
      "Params:",
      "  duration:  5s",
      '  tags:      ["a","b"]',
      "Spec Status:       RunCancelled (cancel requested)",
      "Status Message:    stopped by a user",
      "Timeout:           0s (no timeout)",
      "Retries:           2 (1 used)",
      "Started:           2025-06-01T12:00:01Z (9s ago)",
      "Completed:         2025-06-01T12:00:04Z (6s ago)",
      "Succeeded:         False (ResolutionFailed)",
      "Reason Chain:",
      "  CustomRun failed: ResolutionFailed: could not resolve wait.yaml",
      '  ← ResolutionRequest git-abc failed: ResolutionFailed (NotFound): path "wait.yaml" not found',
      "Conditions:",
      "  Type        Status   Reason             Last Transition                 Message",
      "  ----        ------   ------             ---------------                 -------",
      "  Succeeded   False    ResolutionFailed   2025-06-01T12:00:04Z (6s ago)   could not resolve wait.yaml",
      "Results:",
      '  summary:  "two\\nlines"',
      "  code:     1",
      "Retries Status:",
      "  Attempt   Status   Reason             Start Time             Completion Time        Message",
      "  -------   ------   ------             ----------             ---------------        -------",
      "  1         False    ResolutionFailed   2025-06-01T12:00:01Z   2025-06-01T12:00:02Z   first try",
      "Child References:",
      "  API Version                     Kind                Name           Pipeline Task   Outcome",
      "  -----------                     ----                ----           -------------   -------",
      "  resolution.tekton.dev/v1beta1   ResolutionRequest   git-abc        wait            False ResolutionFailed (NotFound)",
      "  v1                              ConfigMap           wait-1-state",
      "RefSource:",
      "  URI:          git+https://example.com/catalog.git",
      "  Digest:       sha1:abc123",
      "  Entry Point:  wait.yaml",
      "Events:",
      "  Type      Reason             Age   From             Message",
      "  ----      ------             ---   ----             -------",
      "  Warning   ResolutionFailed   6s    run-controller   could not resolve wait.yaml",
      "",
    ].join("\n"),
  );
  assert.doesNotMatch(out, new RegExp(`${SECRET}|secret-ish`));
});

test("a fresh Run with an embedded spec: no status yet, defaults spelled out", () => {
  const fresh: Run = {
    apiVersion: "tekton.dev/v1alpha1",
    kind: "Run",
    metadata: { name: "approve", namespace: "ci", creationTimestamp: "2025-06-01T12:00:09Z" },
    spec: { spec: { apiVersion: "example.dev/v1", kind: "Approval", spec: { approvers: ["a"] } } },
  };
  const out = describeRun(fresh, [], [], now);
  const field = (key: string) => out.split("\n").find((l) => l.startsWith(`${key}:`));
  assert.equal(field("Flavour"), "Flavour:           Run (tekton.dev/v1alpha1)");
  assert.equal(field("Target"), "Target:            Approval (apiVersion example.dev/v1)");
  assert.equal(field("Ref"), "Ref:               embedded spec (spec.spec)");
  assert.equal(field("Params"), "Params:            <none>");
  assert.equal(field("Spec Status"), "Spec Status:       <none>");
  assert.equal(field("Status Message"), undefined);
  assert.equal(field("Timeout"), "Timeout:           <unset> (default 60m)");
  assert.equal(field("Retries"), "Retries:           0");
  assert.equal(field("Started"), "Started:           <not yet>");
  assert.equal(field("Succeeded"), "Succeeded:         <none>");
  assert.match(out, /\nReason Chain:\n {2}Run pending: no Succeeded condition yet\nConditions: +<none>\n/);
  for (const key of ["Results", "Retries Status", "Child References", "RefSource", "Events"]) {
    assert.match(out, new RegExp(`^${key}: +<none>$`, "m"), key);
  }
});

test("a run with neither a ref nor a spec says which fields are missing", () => {
  const bare: CustomRun = { ...failed, spec: {}, status: undefined };
  assert.match(
    describeRun(bare, [], [], now),
    /^Ref: +<none> \(neither spec\.customRef nor spec\.customSpec is set\)$/m,
  );
});

test("a child request that is gone, pending, or succeeded", () => {
  const refs = (...names: string[]) =>
    names.map((name) => ({ apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name }));
  const running: CustomRun = {
    ...failed,
    status: {
      conditions: [{ type: "Succeeded", status: "Unknown", reason: "Resolving" }],
      childReferences: refs("gone", "waiting", "done"),
    },
  };
  const children: ChildRequest[] = [
    { name: "gone", request: undefined, error: "not found" },
    { name: "waiting", request: { ...failedRequest, status: {} } },
    {
      name: "done",
      request: {
        ...failedRequest,
        status: { conditions: [{ type: "Succeeded", status: "True" }], data: SECRET },
      },
    },
  ];
  const out = describeRun(running, children, [], now);
  assert.match(
    out,
    new RegExp(
      [
        "\nReason Chain:",
        "  CustomRun running: Resolving",
        "  ← ResolutionRequest gone: <not found>",
        "  ← ResolutionRequest waiting pending: no Succeeded condition yet",
        "  ← ResolutionRequest done succeeded\n",
      ].join("\n"),
    ),
  );
  assert.match(out, /^ {2}\S+ +ResolutionRequest +gone +<not found>$/m);
  assert.match(out, /^ {2}\S+ +ResolutionRequest +waiting +<no Succeeded condition>$/m);
  assert.match(out, /^ {2}\S+ +ResolutionRequest +done +True$/m);
  assert.doesNotMatch(out, new RegExp(SECRET));
});

/** A client answering GETs from a table keyed "plural/name" and recording every call. */
function fakeClient(objects: Record<string, unknown>, unserved: string[] = []) {
  const calls: string[] = [];
  const client = {
    get: async (rt: { plural: string }, _ns: string, name: string) => {
      calls.push(`get ${rt.plural}/${name}`);
      if (unserved.includes(rt.plural)) throw new ApiError(404, undefined, "404 page not found");
      const obj = objects[`${rt.plural}/${name}`];
      if (obj === undefined) throw new ApiError(404, "NotFound", `${rt.plural} "${name}" not found`);
      return obj;
    },
    list: async (_rt: { plural: string }, _ns: string, opts: { fieldSelector: string }) => {
      calls.push(`list events ${opts.fieldSelector}`);
      return { items: [] };
    },
  } as unknown as KubeClient;
  return { client, calls };
}

async function describeWith(client: KubeClient, name: string, flavour?: "Run" | "CustomRun") {
  let out = "";
  await runDescribeRun(client, "ci", name, flavour, (s) => (out += s));
  return out;
}

test("finds a CustomRun first, fetches its child request, and its Events by kind", async () => {
  const { client, calls } = fakeClient({
    "customruns/wait-1": failed,
    "runs/wait-1": { ...failed, kind: "Run" },
    "resolutionrequests/git-abc": failedRequest,
  });
  const out = await describeWith(client, "wait-1");
  assert.deepEqual(calls, [
    "get customruns/wait-1",
    "get resolutionrequests/git-abc",
    "list events involvedObject.name=wait-1,involvedObject.kind=CustomRun",
  ]);
  assert.match(out, /← ResolutionRequest git-abc failed: ResolutionFailed \(NotFound\)/);
  assert.doesNotMatch(out, new RegExp(SECRET));
});

test("falls back to a Run, honours --kind, and says when there is neither", async () => {
  const run: Run = { ...failed, apiVersion: "tekton.dev/v1alpha1", kind: "Run", spec: {}, status: undefined };
  const { client, calls } = fakeClient({ "runs/approve": run }, ["customruns"]);
  assert.match(await describeWith(client, "approve"), /^Flavour: +Run /m);
  assert.deepEqual(calls.slice(0, 2), ["get customruns/approve", "get runs/approve"]);
  assert.match(calls[2]!, /involvedObject\.kind=Run$/);

  await assert.rejects(
    describeWith(client, "approve", "CustomRun"),
    /does not serve customruns\.tekton\.dev/,
  );
  await assert.rejects(describeWith(client, "nope"), /no CustomRun or Run named "nope" in namespace "ci"/);
  await assert.rejects(
    describeWith(fakeClient({}, ["runs", "customruns"]).client, "x"),
    /does not serve customruns\.tekton\.dev or runs\.tekton\.dev/,
  );
  const missingRequest = fakeClient({ "customruns/wait-1": failed });
  assert.match(
    await describeWith(missingRequest.client, "wait-1"),
    /← ResolutionRequest git-abc: <not found>/,
  );
});
