// Quarry's Run (tekton.dev/v1alpha1) and CustomRun (tekton.dev/v1beta1) CRDs
// on a real kube-apiserver: Tekton-shaped runs are admitted and round-trip,
// malformed ones are rejected at admission by the schema and its CEL rules,
// status goes through the status subresource only, and kubectl's columns and
// categories are there. Skipped when the run uses other run CRDs
// (QUARRY_E2E_RUN_CRDS=tekton: Tekton's schemaless ones validate nothing).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { test } from "node:test";
import { type AnyRun, type CustomRun, customRuns, type Run, type RunStatus, runs } from "@quarry/api";
import { useScenario } from "@quarry/harness/scenario";
import { isApiError, type KubeObject } from "@quarry/kube";

const mode = process.env.QUARRY_E2E_RUN_CRDS ?? "quarry";
const skip = mode === "quarry" ? false : `the control plane has run CRDs "${mode}", not Quarry's`;
const scenario = useScenario("run-crd");

const params = [
  { name: "s", value: "x" },
  { name: "a", value: ["x", "y"] },
  { name: "o", value: { k: "v" } },
];

/** A CustomRun as Tekton's PipelineRun reconciler creates it for a remotely resolved custom task. */
function customRun(namespace: string, name: string, spec: Record<string, unknown> = {}): CustomRun {
  return {
    apiVersion: "tekton.dev/v1beta1",
    kind: "CustomRun",
    metadata: { name, namespace, labels: { "tekton.dev/pipelineTask": "wait" } },
    spec: {
      customRef: {
        apiVersion: "quarry.dev/v1alpha1",
        kind: "Wait",
        resolver: "git",
        params: [
          { name: "url", value: "https://example.com/repo.git" },
          { name: "paths", value: ["a.yaml", "b.yaml"] },
          { name: "opts", value: { depth: "1" } },
        ],
      },
      params,
      serviceAccountName: "",
      timeout: "1h0m0s",
      retries: 2,
      workspaces: [{ name: "src", emptyDir: {} }],
      ...spec,
    },
  };
}

/** A v1alpha1 Run embedding its custom task's spec. */
function run(namespace: string, name: string, spec: Record<string, unknown> = {}): Run {
  return {
    apiVersion: "tekton.dev/v1alpha1",
    kind: "Run",
    metadata: { name, namespace },
    spec: {
      spec: {
        apiVersion: "quarry.dev/v1alpha1",
        kind: "Wait",
        metadata: { labels: { a: "b" } },
        spec: { duration: "5s", nested: { list: [1, 2] } },
      },
      params,
      serviceAccountName: "builder",
      podTemplate: { nodeSelector: { disk: "ssd" } },
      timeout: "90s",
      ...spec,
    },
  };
}

function create<T extends AnyRun>(obj: T): Promise<T> {
  const rt = obj.kind === "Run" ? runs : customRuns;
  return scenario().admin.create(rt, obj as T & KubeObject);
}

/** The apiserver's message for a 422 Invalid, or a description of what happened instead. */
async function rejection(obj: AnyRun): Promise<string> {
  try {
    await create(obj);
    return "admitted";
  } catch (err) {
    return isApiError(err, 422) ? err.message : `not a 422: ${String(err)}`;
  }
}

const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `p${i}`, value: "v" }));

test("Tekton-shaped runs are admitted and round-trip unchanged", { skip }, async () => {
  const ns = scenario().namespace;
  for (const obj of [
    customRun(ns, "remote"),
    run(ns, "embedded"),
    run(ns, "by-ref", {
      spec: undefined,
      ref: { apiVersion: "quarry.dev/v1alpha1", kind: "Wait", name: "w" },
    }),
    customRun(ns, "embedded-custom", {
      customRef: undefined,
      customSpec: { apiVersion: "quarry.dev/v1alpha1", kind: "Wait", metadata: {}, spec: { x: 1 } },
      timeout: "0s",
    }),
    customRun(ns, "at-the-bound", { params: many(256) }),
  ]) {
    const created = await create(obj);
    // JSON drops the undefined fields the fixtures override, as on the wire
    assert.deepEqual(created.spec, JSON.parse(JSON.stringify(obj.spec)), `${obj.metadata.name} round-trips`);
  }
});

test("Tekton's cancel patch is admitted", { skip }, async () => {
  const scn = scenario();
  await create(customRun(scn.namespace, "to-cancel"));
  const statusMessage = "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.";
  const patched = await scn.admin.mergePatch<CustomRun & KubeObject>(customRuns, scn.namespace, "to-cancel", {
    spec: { status: "RunCancelled", statusMessage },
  });
  assert.equal(patched.spec.status, "RunCancelled");
  assert.equal(patched.spec.statusMessage, statusMessage);
});

test("malformed runs are rejected at admission with a message naming the problem", { skip }, async () => {
  const ns = scenario().namespace;
  const ref = { apiVersion: "quarry.dev/v1alpha1", kind: "Wait", name: "w" };
  const cases: [AnyRun, RegExp][] = [
    [run(ns, "both", { ref }), /spec\.ref and spec\.spec are mutually exclusive: set exactly one/],
    [
      customRun(ns, "both", { customSpec: { apiVersion: "quarry.dev/v1alpha1", kind: "Wait" } }),
      /spec\.customRef and spec\.customSpec are mutually exclusive/,
    ],
    [run(ns, "neither", { spec: undefined }), /a Run needs spec\.ref .* or spec\.spec/],
    [
      customRun(ns, "neither", { customRef: undefined }),
      /a CustomRun needs spec\.customRef .* or spec\.customSpec/,
    ],
    [
      run(ns, "ref-no-kind", { spec: undefined, ref: { apiVersion: "quarry.dev/v1alpha1", name: "w" } }),
      /spec\.ref\.kind: Required value/,
    ],
    [
      customRun(ns, "ref-no-apiversion", { customRef: { kind: "Wait", name: "w" } }),
      /spec\.customRef\.apiVersion: Required value/,
    ],
    [
      customRun(ns, "ref-empty-kind", { customRef: { apiVersion: "quarry.dev/v1alpha1", kind: "" } }),
      /spec\.customRef\.kind/,
    ],
    [
      run(ns, "spec-no-kind", { spec: { apiVersion: "quarry.dev/v1alpha1" } }),
      /spec\.spec\.kind: Required value/,
    ],
    [
      customRun(ns, "message-only", { statusMessage: "why" }),
      /spec\.statusMessage: .*statusMessage may only be set together with status/,
    ],
    [customRun(ns, "wrong-status", { status: "Cancelled" }), /spec\.status: Unsupported value: "Cancelled"/],
    [customRun(ns, "negative-timeout", { timeout: "-1s" }), /spec\.timeout/],
    [run(ns, "malformed-timeout", { timeout: "1 day" }), /spec\.timeout/],
    [customRun(ns, "negative-retries", { retries: -1 }), /spec\.retries/],
    [
      customRun(ns, "3000-params", { params: many(3000) }),
      /spec\.params: Too many: 3000: must have at most 256 items/,
    ],
    [
      customRun(ns, "duplicate-params", { params: [...params, { name: "s", value: "again" }] }),
      /spec\.params: .*param names must be unique/,
    ],
    [
      customRun(ns, "duplicate-resolver-params", {
        customRef: {
          apiVersion: "quarry.dev/v1alpha1",
          kind: "Wait",
          resolver: "git",
          params: [
            { name: "url", value: "a" },
            { name: "url", value: "b" },
          ],
        },
      }),
      /spec\.customRef\.params: .*param names must be unique/,
    ],
  ];
  const failures: string[] = [];
  for (const [obj, expected] of cases) {
    const message = await rejection(obj);
    if (!expected.test(message)) failures.push(`${obj.kind} ${obj.metadata.name}: ${message}`);
  }
  assert.deepEqual(failures, []);
});

test("an update is held to the same rules: statusMessage cannot stay once status is cleared", {
  skip,
}, async () => {
  const scn = scenario();
  await create(customRun(scn.namespace, "uncancel", { status: "RunCancelled", statusMessage: "stop" }));
  await assert.rejects(
    scn.admin.mergePatch(customRuns, scn.namespace, "uncancel", { spec: { status: null } }),
    (err: unknown) => isApiError(err, 422) && /statusMessage may only be set/.test(err.message),
  );
});

test("status is written through the status subresource only, Quarry's own fields included", {
  skip,
}, async () => {
  const scn = scenario();
  const status: RunStatus = {
    observedGeneration: 1,
    conditions: [
      {
        type: "Succeeded",
        status: "True",
        reason: "Succeeded",
        message: "done",
        lastTransitionTime: "2025-01-02T03:04:05Z",
      },
    ],
    startTime: "2025-01-02T03:04:00Z",
    completionTime: "2025-01-02T03:04:05Z",
    results: [{ name: "digest", value: "sha256:abc" }],
    retriesStatus: [{ conditions: [{ type: "Succeeded", status: "False", reason: "Failed" }] }],
    extraFields: { anything: { nested: [1, true] } },
    childReferences: [
      { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "rr-1" },
    ],
    provenance: { refSource: { uri: "git+https://example.com/repo.git", digest: { sha1: "abc" } } },
  };
  // a status sent with the object itself is dropped
  const created = await create({ ...customRun(scn.namespace, "with-status"), status } as CustomRun);
  assert.equal(created.status, undefined);
  const generation = created.metadata.generation;

  const written = await scn.admin.replace<CustomRun & KubeObject>(
    customRuns,
    { ...created, status },
    "status",
  );
  assert.deepEqual(written.status, status);
  assert.equal(written.metadata.generation, generation, "a status write does not bump the generation");

  // a main-resource write cannot change the status
  const other = { ...status, results: [{ name: "digest", value: "forged" }] };
  const updated = await scn.admin.replace<CustomRun & KubeObject>(customRuns, {
    ...written,
    metadata: { ...written.metadata, labels: { changed: "yes" } },
    status: other,
  });
  assert.deepEqual(updated.metadata.labels, { changed: "yes" });
  assert.deepEqual(updated.status, status);

  // and the status subresource validates too
  await assert.rejects(
    scn.admin.replace(
      customRuns,
      { ...updated, status: { ...status, conditions: [{ type: "Succeeded", status: "Maybe" }] } },
      "status",
    ),
    (err: unknown) => isApiError(err, 422) && /status\.conditions\[0\]\.status/.test(err.message),
  );
});

interface Table {
  columnDefinitions: { name: string }[];
  rows: { cells: unknown[] }[];
}

/** GET as kubectl does for `kubectl get`: the server-side table with the CRD's printer columns. */
function getTable(path: string): Promise<Table> {
  const { cp } = scenario();
  const config = JSON.parse(readFileSync(cp.adminKubeconfig, "utf8")) as {
    users: { user: { token: string } }[];
  };
  const token = config.users[0]?.user.token ?? "";
  return new Promise((resolve, reject) => {
    const req = request(
      `${cp.server}${path}`,
      {
        ca: readFileSync(cp.caFile),
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(JSON.parse(body) as Table)
            : reject(new Error(`${res.statusCode} ${body}`)),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

test("kubectl's columns show Succeeded, Reason and the custom task's Kind, from a ref or an embedded spec", {
  skip,
}, async () => {
  const scn = scenario();
  const refRun = await create(
    customRun(scn.namespace, "columns-ref", { customRef: { apiVersion: "x.dev/v1", kind: "ByRef" } }),
  );
  await create(
    customRun(scn.namespace, "columns-spec", {
      customRef: undefined,
      customSpec: { apiVersion: "x.dev/v1", kind: "Embedded" },
    }),
  );
  await scn.admin.replace(
    customRuns,
    {
      ...refRun,
      status: {
        conditions: [{ type: "Succeeded", status: "False", reason: "CustomRunTimedOut" }],
        startTime: "2025-01-02T03:04:00Z",
      },
    },
    "status",
  );
  const table = await getTable(`/apis/tekton.dev/v1beta1/namespaces/${scn.namespace}/customruns`);
  const names = table.columnDefinitions.map((c) => c.name);
  assert.deepEqual(names, ["Name", "Succeeded", "Reason", "Kind", "StartTime", "CompletionTime"]);
  const rows = Object.fromEntries(table.rows.map((r) => [r.cells[0], r.cells]));
  assert.deepEqual(rows["columns-ref"]?.slice(1, 4), ["False", "CustomRunTimedOut", "ByRef"]);
  assert.equal(rows["columns-spec"]?.[3], "Embedded");

  await create(run(scn.namespace, "columns-run"));
  const runTable = await getTable(`/apis/tekton.dev/v1alpha1/namespaces/${scn.namespace}/runs`);
  const runRows = Object.fromEntries(runTable.rows.map((r) => [r.cells[0], r.cells]));
  assert.equal(runRows["columns-run"]?.[3], "Wait");
});

test("runs and customruns are in the tekton and tekton-pipelines categories", { skip }, async () => {
  const { admin } = scenario();
  for (const [version, plural] of [
    ["v1alpha1", "runs"],
    ["v1beta1", "customruns"],
  ]) {
    const discovery = await admin.request<{ resources: { name: string; categories?: string[] }[] }>(
      "GET",
      `/apis/tekton.dev/${version}`,
    );
    const resource = discovery.resources.find((r) => r.name === plural);
    assert.deepEqual(resource?.categories, ["tekton", "tekton-pipelines"], plural);
    assert.ok(
      discovery.resources.some((r) => r.name === `${plural}/status`),
      `${plural}/status`,
    );
  }
});

// Runs in every mode: what each flavour of the CRD keeps of Quarry's own status fields.
test("Quarry's status fields survive Quarry's and Tekton's schemaless CRDs; Tekton's structural schema prunes them", {
  skip: mode === "none" ? "no run CRDs installed" : false,
}, async () => {
  const scn = scenario();
  const created = await create(customRun(scn.namespace, "quarry-fields"));
  const quarryOnly = {
    childReferences: [
      { apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "rr-1" },
    ],
    provenance: { refSource: { uri: "git+https://example.com/repo.git", digest: { sha1: "abc" } } },
  };
  const tektons = {
    conditions: [{ type: "Succeeded", status: "Unknown" as const, reason: "Running" }],
    extraFields: { quarry: { resolutionRequest: "rr-1" } },
  };
  const written = await scn.admin.replace<CustomRun & KubeObject>(
    customRuns,
    { ...created, status: { ...tektons, ...quarryOnly } },
    "status",
  );
  const kept = mode === "tekton-structural" ? tektons : { ...tektons, ...quarryOnly };
  assert.deepEqual(written.status, kept);
});
