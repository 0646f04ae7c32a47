// A run's remote definition: the request it needs (Tekton's deterministic
// name, owned by the run, labelled with it) and what that request's status
// means to the task.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AnyRun,
  type Condition,
  type Param,
  type ResolutionRequest,
  type RunRef,
  requestNameFor,
} from "@quarry/api";
import { buildRequest } from "@quarry/requester";
import { LABEL_RUN, refOutcome, remoteRequest } from "./remote.ts";

const GIT_PARAMS: Param[] = [
  { name: "url", value: "https://github.com/tektoncd/catalog.git" },
  { name: "revision", value: "main" },
  { name: "pathInRepo", value: "task/echo.yaml" },
];

function mkRun(
  kind: "Run" | "CustomRun",
  ref: RunRef | undefined,
  meta: Partial<AnyRun["metadata"]> = {},
): AnyRun {
  const metadata = { name: "pr-1", namespace: "default", uid: "uid-1", ...meta };
  if (kind === "Run") return { apiVersion: "tekton.dev/v1alpha1", kind, metadata, spec: ref ? { ref } : {} };
  return { apiVersion: "tekton.dev/v1beta1", kind, metadata, spec: ref ? { customRef: ref } : {} };
}

const remoteRef = (resolver: string, params: Param[] = GIT_PARAMS): RunRef => ({
  apiVersion: "wait.testing.tekton.dev/v1beta1",
  kind: "Wait",
  resolver,
  params,
});

test("remoteRequest: none for local refs and embedded specs", () => {
  assert.deepEqual(remoteRequest(mkRun("CustomRun", { apiVersion: "x.dev/v1", kind: "Wait" })), {
    type: "none",
  });
  assert.deepEqual(
    remoteRequest(mkRun("CustomRun", { apiVersion: "x.dev/v1", kind: "Wait", name: "five" })),
    {
      type: "none",
    },
  );
  assert.deepEqual(
    remoteRequest(mkRun("CustomRun", { apiVersion: "x.dev/v1", kind: "Wait", resolver: "" })),
    {
      type: "none",
    },
  );
  assert.deepEqual(remoteRequest(mkRun("Run", undefined)), { type: "none" });
});

test("remoteRequest: Tekton's deterministic name for the run, owned by the run, labelled with it", () => {
  for (const kind of ["Run", "CustomRun"] as const) {
    const run = mkRun(kind, remoteRef("git"));
    const got = remoteRequest(run);
    assert.equal(got.type, "request");
    if (got.type !== "request") continue;
    // the name Tekton gives a request for an owner "default/pr-1" (libs/api's vector)
    assert.equal(got.name, "git-f8cc4936892eaca1fa9534a6e803c0c0", kind);
    assert.equal(
      got.name,
      requestNameFor({
        resolverType: "git",
        namespace: "default",
        name: "pr-1",
        spec: { params: GIT_PARAMS },
      }),
    );
    assert.deepEqual(got.input, {
      namespace: "default",
      resolverType: "git",
      params: GIT_PARAMS,
      owner: { apiVersion: run.apiVersion, kind, name: "pr-1", uid: "uid-1" },
      labels: { [LABEL_RUN]: "pr-1" },
    });
    // and the request the requester creates from it is that name, controlled by the run
    const rr = buildRequest(got.input);
    assert.equal(rr.metadata.name, got.name);
    assert.equal(rr.metadata.namespace, "default");
    assert.deepEqual(rr.metadata.ownerReferences, [
      {
        apiVersion: run.apiVersion,
        kind,
        name: "pr-1",
        uid: "uid-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(rr.metadata.labels?.[LABEL_RUN], "pr-1");
    assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], "git");
  }
});

test("remoteRequest: the name follows the run's name and params, not their order", () => {
  const name = (run: AnyRun) => {
    const r = remoteRequest(run);
    return r.type === "request" ? r.name : r.type;
  };
  const base = name(mkRun("CustomRun", remoteRef("git")));
  assert.equal(name(mkRun("CustomRun", remoteRef("git", [...GIT_PARAMS].reverse()))), base);
  assert.notEqual(name(mkRun("CustomRun", remoteRef("git"), { name: "pr-2" })), base);
  assert.notEqual(name(mkRun("CustomRun", remoteRef("git"), { namespace: "other" })), base);
  assert.notEqual(name(mkRun("CustomRun", remoteRef("git", GIT_PARAMS.slice(1)))), base);
  assert.match(name(mkRun("CustomRun", remoteRef("bundles"))), /^bundles-[0-9a-f]{32}$/);
  // a run without params asks with an empty list
  const bare = remoteRequest(mkRun("CustomRun", { apiVersion: "x.dev/v1", kind: "Wait", resolver: "hub" }));
  assert.equal(bare.type === "request" && bare.input.params.length, 0);
});

test("remoteRequest: invalid resolver names and runs without identity", () => {
  const rows: { name: string; run: AnyRun; message: RegExp }[] = [
    {
      name: "upper case",
      run: mkRun("CustomRun", remoteRef("Git")),
      message: /"Git" is not a valid resolver name/,
    },
    {
      name: "underscore",
      run: mkRun("Run", remoteRef("my_resolver")),
      message: /"my_resolver" is not a valid/,
    },
    {
      name: "leading dash",
      run: mkRun("CustomRun", remoteRef("-git")),
      message: /not a valid resolver name/,
    },
    { name: "64 characters", run: mkRun("CustomRun", remoteRef("a".repeat(64))), message: /DNS-1123 label/ },
    {
      name: "no uid",
      run: mkRun("CustomRun", remoteRef("git"), { uid: "" }),
      message: /no name, namespace or uid/,
    },
    {
      name: "no namespace",
      run: mkRun("CustomRun", remoteRef("git"), { namespace: "" }),
      message: /no name, namespace or uid/,
    },
  ];
  for (const row of rows) {
    const got = remoteRequest(row.run);
    assert.equal(got.type, "invalid", row.name);
    if (got.type === "invalid") assert.match(got.message, row.message, row.name);
  }
  assert.equal(remoteRequest(mkRun("CustomRun", remoteRef("a".repeat(63)))).type, "request");
});

function request(
  conditions: Condition[] | undefined,
  status: Partial<ResolutionRequest["status"]> = {},
): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "git-abc", namespace: "default" },
    spec: { params: GIT_PARAMS },
    status: { ...(conditions ? { conditions } : {}), ...status },
  };
}

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const WAIT_YAML = `apiVersion: wait.testing.tekton.dev/v1beta1
kind: Wait
spec:
  params:
    - name: duration
      default: 5s
`;
const refSource = {
  uri: "git+https://github.com/x/y.git",
  digest: { sha1: "0123abcd" },
  entryPoint: "wait.yaml",
};

test("refOutcome", () => {
  const rows: { name: string; rr: ResolutionRequest; want: unknown }[] = [
    {
      name: "no condition yet",
      rr: request(undefined),
      want: { state: "pending", request: "git-abc", message: undefined },
    },
    {
      name: "in progress",
      rr: request([
        { type: "Succeeded", status: "Unknown", reason: "ResolutionInProgress", message: "waiting" },
      ]),
      want: { state: "pending", request: "git-abc", message: "waiting" },
    },
    {
      name: "data while still Unknown is pending",
      rr: request([{ type: "Succeeded", status: "Unknown" }], { data: b64(WAIT_YAML) }),
      want: { state: "pending", request: "git-abc", message: undefined },
    },
    {
      name: "failed with Quarry's finer reason",
      rr: request(
        [{ type: "Succeeded", status: "False", reason: "ResolutionFailed", message: "no such file" }],
        {
          annotations: { "quarry.dev/reason": "NotFound" },
        },
      ),
      want: {
        state: "failed",
        request: "git-abc",
        reason: "ResolutionFailed",
        message: "no such file",
        quarryReason: "NotFound",
      },
    },
    {
      name: "timed out, no finer reason",
      rr: request([
        { type: "Succeeded", status: "False", reason: "ResolutionTimedOut", message: "too slow" },
      ]),
      want: { state: "failed", request: "git-abc", reason: "ResolutionTimedOut", message: "too slow" },
    },
    {
      name: "resolved YAML, parsed, refSource kept",
      rr: request([{ type: "Succeeded", status: "True" }], { data: b64(WAIT_YAML), refSource }),
      want: {
        state: "resolved",
        request: "git-abc",
        data: new Uint8Array(Buffer.from(WAIT_YAML)),
        object: {
          apiVersion: "wait.testing.tekton.dev/v1beta1",
          kind: "Wait",
          spec: { params: [{ name: "duration", default: "5s" }] },
        },
        refSource,
      },
    },
    {
      name: "resolved JSON, refSource from the deprecated source field",
      rr: request([{ type: "Succeeded", status: "True" }], {
        data: b64('{"kind":"Wait"}'),
        source: refSource,
      }),
      want: {
        state: "resolved",
        request: "git-abc",
        data: new Uint8Array(Buffer.from('{"kind":"Wait"}')),
        object: { kind: "Wait" },
        refSource,
      },
    },
    {
      name: "resolved but not YAML",
      rr: request([{ type: "Succeeded", status: "True" }], { data: b64("kind: [unclosed\n  x: {") }),
      want: (got: unknown) => {
        const failed = got as { state: string; reason: string; message: string };
        assert.equal(failed.state, "failed");
        assert.equal(failed.reason, "InvalidDefinition");
        assert.match(failed.message, /^resolved definition is not YAML: [^\n]+$/);
      },
    },
    {
      name: "resolved with data that is not base64",
      rr: request([{ type: "Succeeded", status: "True" }], { data: "%%%" }),
      want: {
        state: "failed",
        request: "git-abc",
        reason: "ResolutionFailed",
        message: "request succeeded but status.data is not valid standard base64",
      },
    },
  ];
  for (const row of rows) {
    const got = refOutcome(row.rr);
    if (typeof row.want === "function") row.want(got);
    else assert.deepEqual(got, row.want, row.name);
  }
});
