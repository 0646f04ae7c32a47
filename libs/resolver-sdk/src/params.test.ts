import assert from "node:assert/strict";
import { test } from "node:test";
import { ParamsValidator, paramsToObject } from "./params.ts";

test("paramsToObject turns Tekton's list into an object and takes the cache param out", () => {
  const r = paramsToObject([
    { name: "url", value: "https://x/y.git" },
    { name: "cache", value: "always" },
    { name: "list", value: ["a", "b"] },
  ]);
  assert.deepEqual(r, {
    ok: true,
    params: { url: "https://x/y.git", list: ["a", "b"] },
    cacheMode: "always",
  });
  assert.deepEqual(paramsToObject(undefined), { ok: true, params: {} });
});

test("paramsToObject refuses duplicates and bad cache modes, naming the param", () => {
  const dup = paramsToObject([
    { name: "url", value: "a" },
    { name: "url", value: "b" },
  ]);
  assert.equal(dup.ok, false);
  assert.match(!dup.ok ? dup.message : "", /"url" is given more than once/);
  const bad = paramsToObject([{ name: "cache", value: "sometimes" }]);
  assert.match(!bad.ok ? bad.message : "", /param "cache" must be one of always, never, auto/);
});

test("ParamsValidator messages name required, unknown and mistyped params", () => {
  const v = new ParamsValidator({
    type: "object",
    required: ["name"],
    additionalProperties: false,
    properties: {
      name: { type: "string", minLength: 1 },
      kind: { type: "string", enum: ["task", "pipeline"] },
    },
  });
  assert.equal(v.check({ name: "t" }), undefined);
  assert.match(v.check({}) ?? "", /param "name" is required/);
  assert.match(v.check({ name: "t", colour: "red" }) ?? "", /param "colour" is not supported/);
  assert.match(v.check({ name: ["a"] }) ?? "", /param "name" must be string/);
  assert.match(
    v.check({ name: "t", kind: "trigger" }) ?? "",
    /param "kind" must be equal to one of the allowed values/,
  );
});
