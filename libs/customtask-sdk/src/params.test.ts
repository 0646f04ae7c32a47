import assert from "node:assert/strict";
import { test } from "node:test";
import { type CustomRun, type Param, runView } from "@quarry/api";
import { prepareParams } from "./decide.ts";

const embedded = (spec: Record<string, unknown>, params: Param[] = []): CustomRun => ({
  apiVersion: "tekton.dev/v1beta1",
  kind: "CustomRun",
  metadata: { name: "r", namespace: "ns" },
  spec: { customSpec: { apiVersion: "example.dev/v1", kind: "Wait", spec }, params },
});

const declared = { params: [{ name: "d", default: "5s" }], duration: "$(params.d)" };

const rows: {
  name: string;
  run: CustomRun;
  task?: { params?: { name: string; default?: string }[] };
  want: ReturnType<typeof prepareParams>;
}[] = [
  {
    name: "a ref without declarations: params are the task's to check",
    run: {
      ...embedded({}),
      spec: {
        customRef: { apiVersion: "example.dev/v1", kind: "Wait" },
        params: [{ name: "x", value: "1" }],
      },
    },
    want: { ok: true, params: {}, spec: undefined },
  },
  {
    name: "a given param substituted into the embedded spec",
    run: embedded(declared, [{ name: "d", value: "1s" }]),
    want: { ok: true, params: { d: "1s" }, spec: { ...declared, duration: "1s" } },
  },
  {
    name: "the declared default when the run passes none",
    run: embedded(declared),
    want: { ok: true, params: { d: "5s" }, spec: { ...declared, duration: "5s" } },
  },
  {
    name: "a self-referencing value is inserted once, never expanded again",
    run: embedded(declared, [{ name: "d", value: "$(params.d)" }]),
    want: { ok: true, params: { d: "$(params.d)" }, spec: { ...declared, duration: "$(params.d)" } },
  },
];

for (const row of rows) {
  test(`prepareParams: ${row.name}`, () => {
    assert.deepEqual(prepareParams(row.task ?? {}, runView(row.run)), row.want);
  });
}

const failures: { name: string; run: CustomRun; reason: string; mentions: string }[] = [
  {
    name: "an undeclared param",
    run: embedded(declared, [{ name: "e", value: "1s" }]),
    reason: "UnknownParam",
    mentions: '"e"',
  },
  {
    name: "an array for a string param",
    run: embedded(declared, [{ name: "d", value: ["1s"] }]),
    reason: "InvalidParamType",
    mentions: '"d"',
  },
  {
    name: "a reference to a param nobody declared",
    run: embedded({ duration: "$(params.nope)" }),
    reason: "InvalidParamReference",
    mentions: "nope",
  },
  {
    name: "a missing param without default",
    run: embedded({ params: [{ name: "d" }], duration: "$(params.d)" }),
    reason: "MissingParam",
    mentions: '"d"',
  },
];

for (const row of failures) {
  test(`prepareParams fails: ${row.name}`, () => {
    const got = prepareParams({}, runView(row.run));
    assert.equal(got.ok, false);
    if (got.ok) return;
    assert.equal(got.reason, row.reason, got.message);
    assert.ok(got.message.includes(row.mentions), got.message);
  });
}
