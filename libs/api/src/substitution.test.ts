import assert from "node:assert/strict";
import { test } from "node:test";
import { QuarryReason } from "./reasons.ts";
import { MAX_PARAMS } from "./schemas.ts";
import {
  type JsonLike,
  MAX_PARAM_ELEMENTS,
  MAX_PARAM_VALUE_CHARS,
  MAX_SPEC_DEPTH,
  MAX_SUBSTITUTED_CHARS,
  type ParamDeclaration,
  type ParamReason,
  resolveParams,
  substitute,
} from "./substitution.ts";
import type { Param, ParamValue } from "./types.ts";

type Failure = { reason: ParamReason; match: RegExp };
const isFailure = (w: unknown): w is Failure =>
  typeof w === "object" && w !== null && (w as { match?: unknown }).match instanceof RegExp;

const R = QuarryReason;
const s = (name: string, extra: Partial<ParamDeclaration> = {}): ParamDeclaration => ({ name, ...extra });
const p = (name: string, value: ParamValue): Param => ({ name, value });
const many = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

const resolveCases: {
  name: string;
  declared: ParamDeclaration[] | undefined;
  given: Param[] | undefined;
  want: Record<string, ParamValue> | Failure;
}[] = [
  { name: "nothing declared, nothing given", declared: undefined, given: undefined, want: {} },
  { name: "given string", declared: [s("a")], given: [p("a", "x")], want: { a: "x" } },
  { name: "default applies", declared: [s("a", { default: "d" })], given: [], want: { a: "d" } },
  {
    name: "given beats default",
    declared: [s("a", { default: "d" })],
    given: [p("a", "x")],
    want: { a: "x" },
  },
  { name: "empty string is a value", declared: [s("a")], given: [p("a", "")], want: { a: "" } },
  {
    name: "array and object by declared type",
    declared: [s("l", { type: "array" }), s("o", { type: "object" })],
    given: [p("l", ["1", "2"]), p("o", { k: "v" })],
    want: { l: ["1", "2"], o: { k: "v" } },
  },
  {
    name: "type inferred from default",
    declared: [s("l", { default: [] })],
    given: [p("l", ["x"])],
    want: { l: ["x"] },
  },
  {
    name: "object given over object default",
    declared: [
      s("o", { default: { a: "1", b: "2" }, properties: { a: { type: "string" }, b: { type: "string" } } }),
    ],
    given: [p("o", { b: "B" })],
    want: { o: { a: "1", b: "B" } },
  },
  {
    name: "extra object keys are kept",
    declared: [s("o", { properties: { a: { type: "string" } } })],
    given: [p("o", { a: "1", z: "2" })],
    want: { o: { a: "1", z: "2" } },
  },
  {
    name: "__proto__ key is plain data",
    declared: [s("o", { type: "object" })],
    given: [p("o", JSON.parse('{"__proto__":"x"}'))],
    want: { o: JSON.parse('{"__proto__":"x"}') },
  },
  {
    name: "a param named __proto__ is an own key",
    declared: [s("__proto__")],
    given: [p("__proto__", "x")],
    want: JSON.parse('{"__proto__":"x"}'),
  },
  {
    name: "unknown param",
    declared: [s("a")],
    given: [p("a", "x"), p("zz", "y")],
    want: { reason: R.UnknownParam, match: /param "zz" is not declared \(declared: "a"\)/ },
  },
  {
    name: "unknown param, none declared",
    declared: [],
    given: [p("zz", "y")],
    want: { reason: R.UnknownParam, match: /"zz" is not declared \(no params are declared\)/ },
  },
  {
    name: "missing param",
    declared: [s("a"), s("b", { default: "d" })],
    given: [],
    want: { reason: R.MissingParam, match: /^param "a" has no default and was not given$/ },
  },
  {
    name: "missing params named together",
    declared: [s("a"), s("b")],
    given: [],
    want: { reason: R.MissingParam, match: /params "a", "b" have no default/ },
  },
  {
    name: "duplicate given",
    declared: [s("a")],
    given: [p("a", "1"), p("a", "2")],
    want: { reason: R.DuplicateParam, match: /param "a" is given more than once/ },
  },
  {
    name: "duplicate declared",
    declared: [s("a"), s("a")],
    given: [],
    want: { reason: R.DuplicateParam, match: /param "a" is declared more than once/ },
  },
  {
    name: "array given for string",
    declared: [s("a")],
    given: [p("a", ["x"])],
    want: { reason: R.InvalidParamType, match: /param "a" is declared string, but was given an array/ },
  },
  {
    name: "string given for array",
    declared: [s("l", { type: "array" })],
    given: [p("l", "x")],
    want: { reason: R.InvalidParamType, match: /param "l" is declared array, but was given a string/ },
  },
  {
    name: "object given for array",
    declared: [s("l", { type: "array" })],
    given: [p("l", { k: "v" })],
    want: { reason: R.InvalidParamType, match: /declared array, but was given an object/ },
  },
  {
    name: "not a ParamValue",
    declared: [s("a", { type: "array" })],
    given: [p("a", [1] as unknown as string[])],
    want: { reason: R.InvalidParamType, match: /param "a" is not a string, an array of strings/ },
  },
  {
    name: "object missing declared key",
    declared: [s("o", { properties: { url: { type: "string" }, rev: { type: "string" } } })],
    given: [p("o", { url: "u" })],
    want: { reason: R.InvalidParamType, match: /param "o" lacks key "rev" declared in its properties/ },
  },
  {
    name: "default of the wrong type",
    declared: [s("a", { type: "string", default: ["x"] })],
    given: [],
    want: {
      reason: R.InvalidParamType,
      match: /default of param "a" is an array, but the param is declared string/,
    },
  },
  {
    name: "unknown declared type",
    declared: [s("a", { type: "number" as "string" })],
    given: [],
    want: { reason: R.InvalidParamType, match: /declares type "number"/ },
  },
  {
    name: "properties on a string param",
    declared: [s("a", { type: "string", properties: { k: { type: "string" } } })],
    given: [],
    want: { reason: R.InvalidParamType, match: /only object params have them/ },
  },
  {
    name: "3000 params given fail fast",
    declared: [s("a")],
    given: many(3000, "p").map((n) => p(n, "v")),
    want: { reason: R.ParamsTooLarge, match: /^3000 params are given; at most 128 are allowed$/ },
  },
  {
    name: "too many declared",
    declared: many(MAX_PARAMS + 1, "d").map((n) => s(n, { default: "" })),
    given: [],
    want: { reason: R.ParamsTooLarge, match: /129 params are declared/ },
  },
  {
    name: "exactly MAX_PARAMS is fine",
    declared: many(MAX_PARAMS, "m").map((n) => s(n)),
    given: many(MAX_PARAMS, "m").map((n) => p(n, n)),
    want: Object.fromEntries(many(MAX_PARAMS, "m").map((n) => [n, n])),
  },
  {
    name: "value too long",
    declared: [s("a")],
    given: [p("a", "x".repeat(MAX_PARAM_VALUE_CHARS + 1))],
    want: { reason: R.ParamsTooLarge, match: /param "a" has 65537 characters/ },
  },
  {
    name: "array too long",
    declared: [s("l", { type: "array" })],
    given: [p("l", many(MAX_PARAM_ELEMENTS + 1, ""))],
    want: { reason: R.ParamsTooLarge, match: /param "l" has 1025 elements/ },
  },
  {
    name: "values too large together",
    declared: many(20, "v").map((n) => s(n)),
    given: many(20, "v").map((n) => p(n, "x".repeat(MAX_PARAM_VALUE_CHARS))),
    want: { reason: R.ParamsTooLarge, match: /param values have 1310720 characters together/ },
  },
];

for (const c of resolveCases) {
  test(`resolveParams: ${c.name}`, () => {
    const got = resolveParams(c.declared, c.given);
    if (isFailure(c.want)) {
      assert.equal(got.ok, false, JSON.stringify(got));
      if (got.ok) return;
      assert.equal(got.reason, c.want.reason, got.message);
      assert.match(got.message, c.want.match);
    } else {
      assert.ok(got.ok, got.ok ? "" : got.message);
      assert.deepEqual(Object.fromEntries(got.values), c.want);
    }
  });
}

test("resolveParams: values keep declaration order", () => {
  const got = resolveParams([s("b", { default: "1" }), s("a")], [p("a", "2")]);
  assert.ok(got.ok);
  assert.deepEqual([...got.values.keys()], ["b", "a"]);
});

const VALUES: Record<string, ParamValue> = {
  s: "str",
  t: "two words",
  e: "",
  l: ["a", "b"],
  none: [],
  o: { k: "v", "dotted.key": "dv" },
  "dotted.name": "dn",
  self: "$(params.self)",
  other: "$(params.s)",
};
const values = new Map(Object.entries(VALUES));

const substituteCases: { name: string; input: JsonLike; want: JsonLike | Failure }[] = [
  {
    name: "no references",
    input: "plain $(context.x) $(tasks.a.results.b)",
    want: "plain $(context.x) $(tasks.a.results.b)",
  },
  { name: "whole string", input: "$(params.s)", want: "str" },
  {
    name: "inside a string, twice",
    input: "<$(params.s)|$(params.t)>$(params.s)",
    want: "<str|two words>str",
  },
  { name: "empty value", input: "[$(params.e)]", want: "[]" },
  { name: "double-quote bracket", input: 'x $(params["s"]) y', want: "x str y" },
  { name: "single-quote bracket", input: "x $(params['s']) y", want: "x str y" },
  { name: "bracket name with a dot", input: '$(params["dotted.name"])', want: "dn" },
  { name: "object key", input: "k=$(params.o.k)", want: "k=v" },
  { name: "object key after bracket name", input: "$(params['o'].k)", want: "v" },
  {
    name: "array index inside a string",
    input: "first=$(params.l[0]) second=$(params.l[1])",
    want: "first=a second=b",
  },
  { name: "[*] expands as an element", input: ["x", "$(params.l[*])", "y"], want: ["x", "a", "b", "y"] },
  { name: "bare array ref expands as an element", input: ["$(params.l)"], want: ["a", "b"] },
  { name: "bracket [*] expands", input: ['$(params["l"][*])'], want: ["a", "b"] },
  { name: "empty array expands to nothing", input: ["x", "$(params.none[*])"], want: ["x"] },
  { name: "string ref as an element stays one element", input: ["$(params.s)"], want: ["str"] },
  {
    name: "nested objects and arrays; keys untouched",
    input: { "$(params.s)": { args: ["--n", "$(params.l[*])"], n: 1, b: true, z: null } },
    want: { "$(params.s)": { args: ["--n", "a", "b"], n: 1, b: true, z: null } },
  },
  { name: "self reference inserted literally", input: "$(params.self)", want: "$(params.self)" },
  { name: "value with a reference not re-expanded", input: "$(params.other)!", want: "$(params.s)!" },
  { name: "$(params) alone is not a reference", input: "$(params) $(paramsx)", want: "$(params) $(paramsx)" },
  { name: "unterminated $( is text", input: "cost $(", want: "cost $(" },
  {
    name: "undeclared param",
    input: "echo $(params.nope)",
    want: {
      reason: R.InvalidParamReference,
      match: /reference "\$\(params.nope\)" names param "nope", which is not declared/,
    },
  },
  {
    name: "undeclared param as array element",
    input: ["$(params.nope[*])"],
    want: { reason: R.InvalidParamReference, match: /names param "nope"/ },
  },
  {
    name: "array inside a string",
    input: "args: $(params.l[*])",
    want: {
      reason: R.InvalidParamReference,
      match: /param "l" is an array; a whole array can only stand alone/,
    },
  },
  {
    name: "array as a whole non-element string",
    input: { v: "$(params.l[*])" },
    want: { reason: R.InvalidParamReference, match: /param "l" is an array/ },
  },
  {
    name: "array element with extra text",
    input: ["-$(params.l[*])"],
    want: { reason: R.InvalidParamReference, match: /param "l" is an array/ },
  },
  {
    name: "[*] of a string",
    input: ["$(params.s[*])"],
    want: { reason: R.InvalidParamReference, match: /\[\*\] needs an array, but param "s" is a string/ },
  },
  {
    name: "[*] of a string inside a string",
    input: "x$(params.s[*])",
    want: { reason: R.InvalidParamReference, match: /param "s" is a string; it has no elements/ },
  },
  {
    name: "key of a string",
    input: "$(params.s.k)",
    want: { reason: R.InvalidParamReference, match: /param "s" is a string; it has no keys/ },
  },
  {
    name: "index out of range",
    input: "$(params.l[2])",
    want: { reason: R.InvalidParamReference, match: /param "l" has 2 elements/ },
  },
  {
    name: "missing object key",
    input: "$(params.o.nope)",
    want: { reason: R.InvalidParamReference, match: /param "o" has no key "nope"/ },
  },
  {
    name: "prototype key is not an object key",
    input: "$(params.o.toString)",
    want: { reason: R.InvalidParamReference, match: /has no key "toString"/ },
  },
  {
    name: "prototype name is not a param",
    input: "$(params.constructor)",
    want: { reason: R.InvalidParamReference, match: /names param "constructor", which is not declared/ },
  },
  {
    name: "whole object",
    input: "$(params.o)",
    want: { reason: R.InvalidParamReference, match: /param "o" is an object; use one of its keys/ },
  },
  {
    name: "three dot components",
    input: "$(params.o.k.x)",
    want: { reason: R.InvalidParamReference, match: /malformed param reference "\$\(params.o.k.x\)"/ },
  },
  { name: "empty name", input: "$(params.)", want: { reason: R.InvalidParamReference, match: /malformed/ } },
  { name: "unclosed", input: "$(params.s", want: { reason: R.InvalidParamReference, match: /malformed/ } },
  {
    name: "unquoted bracket",
    input: "$(params[s])",
    want: { reason: R.InvalidParamReference, match: /malformed/ },
  },
  {
    name: "bad index",
    input: "$(params.l[-1])",
    want: { reason: R.InvalidParamReference, match: /malformed/ },
  },
  {
    name: "non-strings pass through",
    input: [1, false, null, { n: 2.5 }],
    want: [1, false, null, { n: 2.5 }],
  },
];

for (const c of substituteCases) {
  test(`substitute: ${c.name}`, () => {
    const got = substitute(c.input, values);
    if (isFailure(c.want)) {
      assert.equal(got.ok, false, JSON.stringify(got));
      if (got.ok) return;
      assert.equal(got.reason, c.want.reason, got.message);
      assert.match(got.message, c.want.match);
    } else {
      assert.ok(got.ok, got.ok ? "" : got.message);
      assert.deepEqual(got.value, c.want);
    }
  });
}

test("substitute: input is not mutated; unchanged parts are shared", () => {
  const untouched = { a: ["x"] };
  const input = { untouched, changed: ["$(params.l[*])"] };
  const copy = structuredClone(input);
  const got = substitute(input, values);
  assert.ok(got.ok);
  assert.deepEqual(input, copy);
  assert.equal((got.value as { untouched: unknown }).untouched, untouched);
});

test("substitute: a large value referenced many times hits the output cap", () => {
  const big = new Map([["b", "x".repeat(MAX_PARAM_VALUE_CHARS)]]);
  const input = Array.from(
    { length: MAX_SUBSTITUTED_CHARS / MAX_PARAM_VALUE_CHARS + 1 },
    () => "$(params.b)",
  );
  const got = substitute(input, big);
  assert.equal(got.ok, false);
  if (!got.ok) assert.equal(got.reason, R.ParamsTooLarge);
});

test("substitute: deep nesting is refused, not a stack overflow", () => {
  let deep: JsonLike = "$(params.s)";
  for (let i = 0; i < MAX_SPEC_DEPTH + 5; i++) deep = [deep];
  const got = substitute(deep, values);
  assert.equal(got.ok, false);
  if (!got.ok) assert.equal(got.reason, R.InvalidRequest);
});

test("resolveParams then substitute", () => {
  const r = resolveParams(
    [s("image", { default: "alpine" }), s("args", { type: "array" }), s("git", { type: "object" })],
    [p("args", ["-c", "echo hi"]), p("git", { url: "https://example.com/r.git" })],
  );
  assert.ok(r.ok);
  const got = substitute(
    { image: "$(params.image):3", args: ["sh", "$(params.args[*])"], src: "$(params.git.url)" },
    r.values,
  );
  assert.deepEqual(got, {
    ok: true,
    value: { image: "alpine:3", args: ["sh", "-c", "echo hi"], src: "https://example.com/r.git" },
  });
});
