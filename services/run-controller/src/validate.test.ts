// runSpecProblem as a table, each row for both flavours: the specs Quarry's
// CRD rejects at admission but Tekton's schemaless CRDs admit, each with the
// exact message the run's InvalidRunSpec condition carries; and the specs
// Tekton creates, which must pass.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun, Param, RunFlavour } from "@quarry/api";
import { defaultRunControllerConfig, type RunControllerConfig } from "./config.ts";
import { decide } from "./decide.ts";
import { MAX_RUN_PARAMS, ReasonInvalidRunSpec, runSpecProblem } from "./validate.ts";

const TARGET = { apiVersion: "wait.testing.tekton.dev/v1beta1", kind: "Wait" };
const FLAVOURS: RunFlavour[] = ["CustomRun", "Run"];

/** spec fields by their role; each row names the flavour's own field names in its message. */
interface Spec {
  ref?: unknown;
  embedded?: unknown;
  [field: string]: unknown;
}

function runOf(flavour: RunFlavour, { ref, embedded, ...rest }: Spec): AnyRun {
  const spec: Record<string, unknown> = { serviceAccountName: "default", ...rest };
  if (ref !== undefined) spec[flavour === "CustomRun" ? "customRef" : "ref"] = ref;
  if (embedded !== undefined) spec[flavour === "CustomRun" ? "customSpec" : "spec"] = embedded;
  const apiVersion = flavour === "CustomRun" ? "tekton.dev/v1beta1" : "tekton.dev/v1alpha1";
  return { apiVersion, kind: flavour, metadata: { name: "r", namespace: "ns", uid: "u" }, spec } as AnyRun;
}

const field = (flavour: RunFlavour, role: "ref" | "spec") =>
  flavour === "CustomRun"
    ? role === "ref"
      ? "spec.customRef"
      : "spec.customSpec"
    : role === "ref"
      ? "spec.ref"
      : "spec.spec";

const many = (n: number): Param[] => Array.from({ length: n }, (_, i) => ({ name: `p${i}`, value: "v" }));
const long = "x".repeat(200);

const rows: { name: string; spec: Spec; problem: (f: RunFlavour) => string | undefined }[] = [
  // what Tekton creates
  { name: "a ref", spec: { ref: TARGET }, problem: () => undefined },
  { name: "a named ref", spec: { ref: { ...TARGET, name: "w" } }, problem: () => undefined },
  {
    name: "a remote ref",
    spec: { ref: { ...TARGET, resolver: "git", params: [{ name: "url", value: "u" }] } },
    problem: () => undefined,
  },
  { name: "an embedded spec", spec: { embedded: { ...TARGET, spec: { a: 1 } } }, problem: () => undefined },
  {
    name: "a cancel",
    spec: { ref: TARGET, status: "RunCancelled", statusMessage: "why" },
    problem: () => undefined,
  },
  { name: 'status "" (unset in Go)', spec: { ref: TARGET, status: "" }, problem: () => undefined },
  {
    name: "params at the bound",
    spec: { ref: TARGET, params: many(MAX_RUN_PARAMS) },
    problem: () => undefined,
  },
  {
    name: "array and object params",
    spec: {
      ref: TARGET,
      params: [
        { name: "a", value: ["x"] },
        { name: "o", value: { k: "v" } },
      ],
    },
    problem: () => undefined,
  },
  // what only a schemaless CRD admits
  {
    name: "both a ref and an embedded spec",
    spec: { ref: TARGET, embedded: TARGET },
    problem: (f) => `${field(f, "ref")} and ${field(f, "spec")} are both set; set exactly one`,
  },
  {
    name: "neither a ref nor an embedded spec",
    spec: {},
    problem: (f) => `neither ${field(f, "ref")} nor ${field(f, "spec")} is set; set exactly one`,
  },
  {
    name: "a ref without apiVersion",
    spec: { ref: { kind: "Wait" } },
    problem: (f) => `${field(f, "ref")}.apiVersion is required`,
  },
  {
    name: "a ref without kind",
    spec: { ref: { apiVersion: TARGET.apiVersion, name: "w" } },
    problem: (f) => `${field(f, "ref")}.kind is required`,
  },
  {
    name: "a ref with an empty kind",
    spec: { ref: { apiVersion: TARGET.apiVersion, kind: "" } },
    problem: (f) => `${field(f, "ref")}.kind is required`,
  },
  {
    name: "an empty ref (apiVersion first)",
    spec: { ref: {} },
    problem: (f) => `${field(f, "ref")}.apiVersion is required`,
  },
  {
    name: "an embedded spec without kind",
    spec: { embedded: { apiVersion: TARGET.apiVersion } },
    problem: (f) => `${field(f, "spec")}.kind is required`,
  },
  {
    name: "an embedded spec without apiVersion",
    spec: { embedded: { kind: "Wait" } },
    problem: (f) => `${field(f, "spec")}.apiVersion is required`,
  },
  {
    name: "spec.status \"Cancelled\" (TaskRun's word, not a run's)",
    spec: { ref: TARGET, status: "Cancelled" },
    problem: () => 'spec.status "Cancelled" is not "RunCancelled" (the only value it takes)',
  },
  {
    name: "a long wrong spec.status, quoted only in part",
    spec: { ref: TARGET, status: long },
    problem: () => `spec.status "${"x".repeat(64)}" is not "RunCancelled" (the only value it takes)`,
  },
  {
    name: "statusMessage without status",
    spec: { ref: TARGET, statusMessage: "why" },
    problem: () => "spec.statusMessage is set but spec.status is not",
  },
  {
    name: 'statusMessage with status ""',
    spec: { ref: TARGET, status: "", statusMessage: "why" },
    problem: () => "spec.statusMessage is set but spec.status is not",
  },
  {
    name: "3,000 params",
    spec: { ref: TARGET, params: many(3000) },
    problem: () => "spec.params has 3000 entries; at most 256 are allowed",
  },
  {
    name: "one param over the bound",
    spec: { ref: TARGET, params: many(MAX_RUN_PARAMS + 1) },
    problem: () => "spec.params has 257 entries; at most 256 are allowed",
  },
  {
    name: "a param given twice",
    spec: {
      ref: TARGET,
      params: [
        { name: "duration", value: "1s" },
        { name: "other", value: "x" },
        { name: "duration", value: "2s" },
      ],
    },
    problem: () => 'spec.params: "duration" is given more than once',
  },
  {
    name: "a long name given twice, quoted only in part",
    spec: {
      ref: TARGET,
      params: [
        { name: long, value: "a" },
        { name: long, value: "b" },
      ],
    },
    problem: () => `spec.params: "${"x".repeat(64)}" is given more than once`,
  },
  {
    name: "a param without a name",
    spec: { ref: TARGET, params: [{ name: "a", value: "x" }, { value: "y" }] },
    problem: () => "spec.params: every param needs a name",
  },
  {
    name: "params that are not a list",
    spec: { ref: TARGET, params: { duration: "1s" } },
    problem: () => "spec.params must be a list of {name, value}",
  },
  // the first problem wins, in the order a reader fixes them
  {
    name: "both set and a wrong status: the ref problem first",
    spec: { ref: TARGET, embedded: TARGET, status: "Cancelled" },
    problem: (f) => `${field(f, "ref")} and ${field(f, "spec")} are both set; set exactly one`,
  },
  {
    name: "a wrong status and duplicate params: the status first",
    spec: { ref: TARGET, status: "Cancelled", params: [...many(2), ...many(2)] },
    problem: () => 'spec.status "Cancelled" is not "RunCancelled" (the only value it takes)',
  },
];

for (const row of rows) {
  for (const flavour of FLAVOURS) {
    test(`${flavour}: ${row.name}`, () => {
      assert.equal(runSpecProblem(runOf(flavour, row.spec)), row.problem(flavour));
    });
  }
}

test("a run with no spec at all has neither a ref nor an embedded spec", () => {
  const run = { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", metadata: { name: "r" } } as AnyRun;
  assert.equal(runSpecProblem(run), "neither spec.customRef nor spec.customSpec is set; set exactly one");
});

test("a run failed for its spec gets no ResolutionRequest (nobody is asked to resolve its definition)", () => {
  const config: RunControllerConfig = {
    ...defaultRunControllerConfig,
    defaults: { ...defaultRunControllerConfig.defaults, enabled: true },
  };
  const remote = {
    ...TARGET,
    resolver: "git",
    params: [{ name: "url", value: "https://example.com/r.git" }],
  };
  for (const flavour of FLAVOURS) {
    const dup = runOf(flavour, { ref: remote, params: [...many(2), ...many(1)] });
    const d = decide(dup, { now: 0, config, request: undefined, cancelSeenAt: undefined });
    assert.equal(d.createRequest, undefined, flavour);
    assert.equal(d.status?.childReferences, undefined, flavour);
    assert.equal(d.enforcement?.reason, ReasonInvalidRunSpec, flavour);
    // a valid run still gets its request, and with enforcement off so does an invalid one
    const ok = runOf(flavour, { ref: remote });
    assert.ok(decide(ok, { now: 0, config, request: undefined, cancelSeenAt: undefined }).createRequest);
    const off = { ...config, defaults: { ...config.defaults, enabled: false } };
    assert.ok(
      decide(dup, { now: 0, config: off, request: undefined, cancelSeenAt: undefined }).createRequest,
    );
  }
});
