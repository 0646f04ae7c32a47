// The run schemas' OpenAPI part, checked with ajv against Tekton-shaped
// objects: what Tekton Pipelines writes passes, malformed fields fail. ajv
// does not evaluate the CEL rules (one of ref/spec, statusMessage with status,
// unique params); the e2e scenario run-crd-validation checks those on a real
// apiserver.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv, type ValidateFunction } from "ajv";
import { GO_DURATION_PATTERN, MAX_RUN_PARAMS, runSchema } from "./run-schemas.ts";
import type { RunFlavour } from "./runs.ts";

function validator(flavour: RunFlavour): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: true, formats: { "date-time": true, int64: true } });
  for (const keyword of [
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
  ])
    ajv.addKeyword({ keyword, schemaType: ["boolean", "string", "array"] });
  return ajv.compile(runSchema(flavour));
}

const validators = { Run: validator("Run"), CustomRun: validator("CustomRun") };

function errorsOf(flavour: RunFlavour, obj: unknown): string[] {
  const validate = validators[flavour];
  return validate(obj) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

const status = {
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
  retriesStatus: [
    {
      conditions: [{ type: "Succeeded", status: "False", reason: "Failed" }],
      startTime: "2025-01-02T03:00:00Z",
    },
  ],
  extraFields: { anything: { nested: [1, true, null] } },
  annotations: { "quarry.dev/reason": "Resolved" },
  childReferences: [{ apiVersion: "resolution.tekton.dev/v1beta1", kind: "ResolutionRequest", name: "rr-1" }],
  provenance: { refSource: { uri: "git+https://example.com/repo.git", digest: { sha1: "abc" } } },
};

const params = [
  { name: "s", value: "x" },
  { name: "a", value: ["x", "y"] },
  { name: "o", value: { k: "v" } },
];

/** A CustomRun as Tekton's PipelineRun reconciler creates it for a custom task resolved remotely. */
function customRun(spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "tekton.dev/v1beta1",
    kind: "CustomRun",
    metadata: { name: "pr-wait", namespace: "ns", labels: { "tekton.dev/pipelineTask": "wait" } },
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
    status,
  };
}

function run(spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "tekton.dev/v1alpha1",
    kind: "Run",
    metadata: { name: "r", namespace: "ns" },
    spec: {
      spec: {
        apiVersion: "quarry.dev/v1alpha1",
        kind: "Wait",
        metadata: { labels: { a: "b" } },
        spec: { duration: "5s", nested: { list: [1, 2] } },
      },
      params,
      serviceAccountName: "builder",
      podTemplate: { nodeSelector: { disk: "ssd" }, securityContext: { runAsNonRoot: true } },
      timeout: "90s",
      ...spec,
    },
    status,
  };
}

test("Tekton-shaped runs pass: remote refs with array and object params, embedded specs, full status", () => {
  assert.deepEqual(errorsOf("CustomRun", customRun()), []);
  assert.deepEqual(errorsOf("Run", run()), []);
  assert.deepEqual(
    errorsOf("Run", run({ spec: undefined, ref: { apiVersion: "example.dev/v1", kind: "Wait", name: "w" } })),
    [],
  );
  // Tekton's cancel patch
  const cancel = {
    status: "RunCancelled",
    statusMessage: "CustomRun cancelled as the PipelineRun it belongs to has been cancelled.",
  };
  assert.deepEqual(errorsOf("CustomRun", customRun(cancel)), []);
  assert.deepEqual(errorsOf("CustomRun", customRun({ status: "" })), []);
  assert.deepEqual(errorsOf("CustomRun", customRun({ timeout: "0s", retries: 0 })), []);
  assert.deepEqual(
    errorsOf(
      "CustomRun",
      customRun({
        params: Array.from({ length: MAX_RUN_PARAMS }, (_, i) => ({ name: `p${i}`, value: "v" })),
      }),
    ),
    [],
  );
});

test("malformed fields fail", () => {
  const bad: [RunFlavour, unknown, RegExp][] = [
    [
      "CustomRun",
      customRun({ status: "Cancelled" }),
      /^\/spec\/status must be equal to one of the allowed values$/,
    ],
    ["CustomRun", customRun({ timeout: "-1s" }), /^\/spec\/timeout must match pattern/],
    ["CustomRun", customRun({ timeout: "1d" }), /^\/spec\/timeout must match pattern/],
    ["CustomRun", customRun({ retries: -1 }), /^\/spec\/retries must be >= 0$/],
    [
      "CustomRun",
      customRun({ params: Array.from({ length: 3000 }, (_, i) => ({ name: `p${i}`, value: "v" })) }),
      /^\/spec\/params must NOT have more than 256 items$/,
    ],
    [
      "CustomRun",
      customRun({ params: [{ name: "", value: "x" }] }),
      /^\/spec\/params\/0\/name must NOT have fewer than 1 characters$/,
    ],
    [
      "CustomRun",
      customRun({ customRef: { apiVersion: "quarry.dev/v1alpha1", name: "x" } }),
      /^\/spec\/customRef must have required property 'kind'$/,
    ],
    [
      "CustomRun",
      customRun({ customRef: { apiVersion: "", kind: "Wait" } }),
      /^\/spec\/customRef\/apiVersion must NOT have fewer than 1 characters$/,
    ],
    [
      "CustomRun",
      customRun({ customSpec: { kind: "Wait" } }),
      /^\/spec\/customSpec must have required property 'apiVersion'$/,
    ],
    [
      "CustomRun",
      customRun({ workspaces: [{ emptyDir: {} }] }),
      /^\/spec\/workspaces\/0 must have required property 'name'$/,
    ],
    ["Run", run({ ref: { kind: "Wait" } }), /^\/spec\/ref must have required property 'apiVersion'$/],
    ["Run", { ...run(), spec: undefined }, /^ must have required property 'spec'$/],
    [
      "Run",
      { ...run(), status: { conditions: [{ type: "Succeeded", status: "Maybe" }] } },
      /^\/status\/conditions\/0\/status must be equal to one of the allowed values$/,
    ],
    [
      "Run",
      { ...run(), status: { results: [{ name: "r", value: 1 }] } },
      /^\/status\/results\/0\/value must be string$/,
    ],
  ];
  for (const [flavour, obj, expected] of bad) {
    const errors = errorsOf(flavour, obj);
    assert.ok(errors.length > 0, `accepted: ${JSON.stringify(obj)}`);
    assert.ok(
      errors.some((e) => expected.test(e)),
      `${expected} not in ${JSON.stringify(errors)}`,
    );
  }
});

test("only a Run has podTemplate; a CustomRun names its fields customRef and customSpec", () => {
  const runSpec = runSchema("Run").properties?.spec?.properties ?? {};
  const customSpec = runSchema("CustomRun").properties?.spec?.properties ?? {};
  assert.ok("podTemplate" in runSpec && "ref" in runSpec && "spec" in runSpec);
  assert.ok(!("podTemplate" in customSpec) && "customRef" in customSpec && "customSpec" in customSpec);
  assert.ok(!("ref" in customSpec) && !("spec" in customSpec));
});

test("the timeout pattern takes what Go's time.ParseDuration takes, except negative durations", () => {
  const re = new RegExp(GO_DURATION_PATTERN, "u");
  const goAccepts = [
    "1h0m0s",
    "0s",
    "0",
    "+0",
    "1.5µs",
    "1μs",
    "500ms",
    "2h45m",
    "1.5h",
    ".5s",
    "1.s",
    "+5m",
    "300ns",
    "10us",
  ];
  for (const d of goAccepts) assert.ok(re.test(d), d);
  const negative = ["-1s", "-1h0m0s", "-0"];
  const goRejects = ["1", "1d", "1 h", "", "h", "1.5", "abc", "5m-3s", ".s", "1H"];
  for (const d of [...negative, ...goRejects]) assert.ok(!re.test(d), d);
});
