import assert from "node:assert/strict";
import { test } from "node:test";
import { goJsonMarshal } from "./gojson.ts";
import { deterministicRequestName, MAX_REQUEST_NAME_LENGTH, requestNameFor } from "./naming.ts";
import type { Param } from "./types.ts";

// Tekton's golden inputs (pkg/resolution/resource/name_test.go).
const golden: Param[] = [
  { name: "string-param", value: "value1" },
  { name: "array-param", value: ["value1", "value2"] },
  { name: "object-param", value: { key: "value" } },
];
const url = "https://foo/bar";

test("Tekton's vectors: prefix, base, params, url", () => {
  assert.equal(deterministicRequestName("prefix", "", {}), "prefix-6c62272e07bb014262b821756295c58d");
  assert.equal(deterministicRequestName("prefix", ""), "prefix-6c62272e07bb014262b821756295c58d");
  assert.equal(deterministicRequestName("", "base", {}), "-6989337ae0757277b806e97e86444ef0");
  assert.equal(deterministicRequestName("", "", { params: golden }), "-52921b17d3c2930a34419c618d6af0e9");
  assert.equal(deterministicRequestName("", "", { url }), "-dcfaf53735f4a84a3e319e17352940b4");
  assert.equal(
    deterministicRequestName("prefix", "base", { params: golden }),
    "prefix-ba2f256f318de7f4154da577c283cb9e",
  );
  assert.equal(
    deterministicRequestName("prefix", "base", { params: golden, url }),
    "prefix-ff25bd24688ab610bdc530a5ab3aabbd",
  );
});

test("param order does not matter", () => {
  const reversed = [...golden].reverse();
  assert.equal(deterministicRequestName("", "", { params: reversed }), "-52921b17d3c2930a34419c618d6af0e9");
  assert.deepEqual(reversed.at(0)?.name, "object-param"); // input not sorted in place
});

test("a 31-character prefix is cut to 30 so the whole hash fits in 63", () => {
  const prefix = "abcdefghijklmnopqrstuvwxyz01234";
  assert.equal(prefix.length, 31);
  const name = deterministicRequestName(prefix, "", {});
  assert.equal(name, "abcdefghijklmnopqrstuvwxyz0123-6c62272e07bb014262b821756295c58d");
  assert.equal(name.length, MAX_REQUEST_NAME_LENGTH);
  assert.equal(
    deterministicRequestName(prefix, "base", { params: golden, url }),
    "abcdefghijklmnopqrstuvwxyz0123-ff25bd24688ab610bdc530a5ab3aabbd",
  );
  // 30 characters fit unchanged
  assert.equal(deterministicRequestName(prefix.slice(0, 30), "", {}), name);
});

// Vectors computed with Go (hash/fnv, encoding/json, sort.SliceStable), mirroring Tekton's code.
test("Go's JSON encoding and byte-order sort are reproduced", () => {
  const params: Param[] = [
    { name: "url", value: "https://example.com/<org>&repo.git" },
    { name: "obj", value: { "10": "a", "9": "<b>\u2028\b\f\x01" } },
    { name: "arr", value: [] },
    { name: "\u{1F600}", value: "astral" },
    { name: "\uFFFD", value: "bmp" },
  ];
  assert.equal(
    deterministicRequestName("git", "team-a/my-run", { params, url }),
    "git-1ef4b643f708bcf528e02e58fcfccab8",
  );
  assert.equal(
    goJsonMarshal({ "10": "a", "9": '<b>&\u2028\u2029\b\f\x01\x7f"\\/é', "\u{1F600}": "x", "\uFFFD": "y" }),
    '{"10":"a","9":"\\u003cb\\u003e\\u0026\\u2028\\u2029\\b\\f\\u0001\x7f\\"\\\\/é","\uFFFD":"y","\u{1F600}":"x"}',
  );
});

test("requestNameFor hashes <namespace>/<name> with the resolver type as prefix", () => {
  const spec = {
    params: [
      { name: "url", value: "https://github.com/tektoncd/catalog.git" },
      { name: "revision", value: "main" },
      { name: "pathInRepo", value: "task/echo.yaml" },
    ],
  };
  const name = requestNameFor({ resolverType: "git", namespace: "default", name: "pr-1", spec });
  assert.equal(name, "git-f8cc4936892eaca1fa9534a6e803c0c0");
  assert.equal(name, deterministicRequestName("git", "default/pr-1", spec));
});

test("requestNameFor refuses an empty namespace or name", () => {
  assert.throws(() => requestNameFor({ resolverType: "git", namespace: "", name: "pr-1" }), /namespace/);
  assert.throws(() => requestNameFor({ resolverType: "git", namespace: "default", name: "" }), /name/);
});
