import assert from "node:assert/strict";
import { test } from "node:test";
import { validateResolutionRequestSpec, validateResolutionRequestStatus } from "./validate.ts";

test("a valid spec passes with every value shape", () => {
  const spec = {
    params: [
      { name: "s", value: "x" },
      { name: "a", value: ["x", "y"] },
      { name: "o", value: { k: "v" } },
    ],
    url: "https://foo/bar",
  };
  assert.deepEqual(validateResolutionRequestSpec(spec), { ok: true, value: spec });
  assert.deepEqual(validateResolutionRequestSpec({}), { ok: true, value: {} });
});

test("errors name the offending field", () => {
  const result = validateResolutionRequestSpec({
    params: [
      { name: "a", value: 1 },
      { name: "", value: ["x", 2] },
      { value: "x" },
      { name: "o", value: { k: 1 } },
    ],
    url: 3,
  });
  assert.deepEqual(result, {
    ok: false,
    errors: [
      "spec.params[0].value: must be a string, an array of strings, or an object of strings",
      "spec.params[1].name: must NOT have fewer than 1 characters",
      "spec.params[1].value: must be a string, an array of strings, or an object of strings",
      "spec.params[2].name: is required",
      "spec.params[3].value: must be a string, an array of strings, or an object of strings",
      "spec.url: must be string",
    ],
  });
});

test("duplicate param names are rejected, as the CRD's CEL rule does", () => {
  const result = validateResolutionRequestSpec({
    params: [
      { name: "a", value: "1" },
      { name: "a", value: "2" },
    ],
  });
  assert.deepEqual(result, { ok: false, errors: ['spec.params[1].name: duplicate param name "a"'] });
});

test("bounds: too many params, too long a name", () => {
  const many = Array.from({ length: 129 }, (_, i) => ({ name: `p${i}`, value: "v" }));
  assert.deepEqual(validateResolutionRequestSpec({ params: many }), {
    ok: false,
    errors: ["spec.params: must NOT have more than 128 items"],
  });
  const long = validateResolutionRequestSpec({ params: [{ name: "n".repeat(254), value: "v" }] }, "rr.spec");
  assert.deepEqual(long, {
    ok: false,
    errors: ["rr.spec.params[0].name: must NOT have more than 253 characters"],
  });
});

test("status validation names keys with dots", () => {
  assert.deepEqual(
    validateResolutionRequestStatus({
      conditions: [{ type: "Succeeded", status: "Maybe" }],
      annotations: { "quarry.dev/reason": 3 },
    }),
    {
      ok: false,
      errors: [
        'status.conditions[0].status: must be one of "True", "False", "Unknown"',
        'status.annotations["quarry.dev/reason"]: must be string',
      ],
    },
  );
  const ok = {
    conditions: [{ type: "Succeeded", status: "True", lastTransitionTime: "2025-01-01T00:00:00Z" }],
    observedGeneration: 1,
    data: "eA==",
    refSource: { uri: "u", digest: { sha256: "d" } },
  };
  assert.deepEqual(validateResolutionRequestStatus(ok), { ok: true, value: ok });
});
