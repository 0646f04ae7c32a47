// What a strategy and a Pipe let a request do: checked objects in, a Forbidden
// naming the field (or nothing) out.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ClusterPipeStrategy, Param, PipeStrategy } from "@quarry/api";
import {
  checkFixedParams,
  checkInlineFiles,
  checkNamespace,
  checkOutputKinds,
  namespaceMatches,
} from "./strategy-policy.ts";
import { kep17Pipe, kep17Strategy } from "./testdata.ts";
import { type CheckedPipe, type CheckedStrategy, validatePipe, validateStrategy } from "./validate.ts";

function strategy(spec: Partial<ClusterPipeStrategy["spec"]> = {}, cluster = false): CheckedStrategy {
  const s = kep17Strategy() as PipeStrategy | ClusterPipeStrategy;
  s.spec = { ...s.spec, ...spec };
  const r = validateStrategy(s, cluster ? "ClusterPipeStrategy" : "PipeStrategy");
  assert.ok(r.ok, JSON.stringify(r));
  return r.strategy;
}

function pipe(change: (p: ReturnType<typeof kep17Pipe>) => void = () => undefined): CheckedPipe {
  const p = kep17Pipe();
  change(p);
  const r = validatePipe(p);
  assert.ok(r.ok, JSON.stringify(r));
  return r.pipe;
}

test("namespaceMatches: a name, or a glob where * is any run of characters", () => {
  const cases: [string, string, boolean][] = [
    ["team-a", "team-a", true],
    ["team-a", "team-ab", false],
    ["*", "anything", true],
    ["team-*", "team-a", true],
    ["team-*", "team-", true],
    ["team-*", "teams", false],
    ["*-prod", "shop-prod", true],
    ["*-prod", "shop-prod-2", false],
    ["a*b*c", "abc", true],
    ["a*b*c", "a-x-b-y-c", true],
    ["a*b*c", "acb", false],
    ["a*a", "a", false],
    ["*b*", "abc", true],
    ["*b*", "ac", false],
  ];
  for (const [pattern, ns, want] of cases)
    assert.equal(namespaceMatches(pattern, ns), want, `${pattern} ~ ${ns}`);
});

test("checkNamespace: a ClusterPipeStrategy only from the namespaces it names; a PipeStrategy is its namespace's", () => {
  const cases: [string, CheckedStrategy, string, RegExp | undefined][] = [
    ["a PipeStrategy", strategy(), "team-a", undefined],
    [
      "a ClusterPipeStrategy that names none",
      strategy({}, true),
      "team-a",
      /^ClusterPipeStrategy "gencert" may not be used from namespace "team-a": its spec.allowedNamespaces is empty \(no namespace may use it until its author names some\)$/,
    ],
    ["named", strategy({ allowedNamespaces: ["team-b", "team-a"] }, true), "team-a", undefined],
    ["by glob", strategy({ allowedNamespaces: ["team-*"] }, true), "team-a", undefined],
    ["every namespace", strategy({ allowedNamespaces: ["*"] }, true), "kube-system", undefined],
    [
      "another namespace",
      strategy({ allowedNamespaces: ["team-b", "shop-*"] }, true),
      "team-a",
      /^ClusterPipeStrategy "gencert" may not be used from namespace "team-a": its spec.allowedNamespaces does not match it$/,
    ],
  ];
  for (const [name, s, ns, want] of cases) {
    const got = checkNamespace(s, ns);
    if (!want) assert.equal(got, undefined, name);
    else {
      assert.equal(got?.reason, "Forbidden", name);
      assert.match(got?.message ?? "", want, name);
    }
  }
});

test("checkInlineFiles: a request's own files only where the strategy allows them (default: not)", () => {
  assert.equal(checkInlineFiles(strategy({ allowInlineFiles: true })), undefined);
  for (const s of [strategy(), strategy({ allowInlineFiles: false })]) {
    const got = checkInlineFiles(s);
    assert.equal(got?.reason, "Forbidden");
    assert.equal(
      got?.message,
      'param "files": PipeStrategy "gencert" does not allow a request to name its own files (its spec.allowInlineFiles is not true); use a Pipe that names the strategy',
    );
  }
});

test("checkOutputKinds: a ConfigMap only for a file the strategy declares ConfigMap; a Secret always", () => {
  // kep17Pipe: /tmp/MyKey.key as a Secret, /tmp/build.env as a ConfigMap
  const declared = strategy({ outputs: [{ path: "/tmp/build.env", kind: "ConfigMap" }] });
  const keyIsSecret = strategy({
    outputs: [
      { path: "/tmp/build.env", kind: "ConfigMap" },
      { path: "/tmp/MyKey.key", kind: "Secret" },
    ],
  });
  const toConfigMap = pipe((p) => {
    p.spec.pipe[0]!.kind = "ConfigMap";
  });
  const allSecrets = pipe((p) => {
    p.spec.pipe[1]!.kind = "Secret";
  });
  const cases: [string, CheckedPipe, CheckedStrategy, RegExp | undefined][] = [
    ["declared ConfigMap", pipe(), declared, undefined],
    ["everything a Secret, nothing declared", allSecrets, strategy(), undefined],
    ["a file declared ConfigMap stored as a Secret", allSecrets, declared, undefined],
    [
      "undeclared: a Secret only",
      pipe(),
      strategy(),
      /^Pipe "gencert": spec.pipe\[1\].kind is ConfigMap, but PipeStrategy "gencert" does not declare "\/tmp\/build.env" a ConfigMap output \(spec.outputs\): it may be stored only as a Secret$/,
    ],
    [
      "declared Secret: the key cannot become a ConfigMap",
      toConfigMap,
      keyIsSecret,
      /^Pipe "gencert": spec.pipe\[0\].kind is ConfigMap, but PipeStrategy "gencert" declares "\/tmp\/MyKey.key" a Secret \(spec.outputs\[1\]\): it may be stored only as a Secret$/,
    ],
    [
      "undeclared key, declared env: the key is refused",
      toConfigMap,
      declared,
      /spec.pipe\[0\].kind is ConfigMap, but PipeStrategy "gencert" does not declare "\/tmp\/MyKey.key"/,
    ],
  ];
  for (const [name, p, s, want] of cases) {
    const got = checkOutputKinds(p, s, "spec.pipe", 'Pipe "gencert"');
    if (!want) assert.equal(got, undefined, name);
    else {
      assert.equal(got?.reason, "Forbidden", name);
      assert.match(got?.message ?? "", want, name);
    }
  }
  // a request's own files are named by the param
  const got = checkOutputKinds(pipe(), strategy(), 'param "files"', "request");
  assert.match(got?.message ?? "", /^request: param "files"\[1\].kind is ConfigMap, but/);
});

test("checkFixedParams: a request may not give a fixed param another value; the same value passes", () => {
  const p = pipe((x) => {
    x.spec.params = [
      { name: "cn", value: "example.com", fixed: true },
      { name: "days", value: "30" },
      { name: "flags", value: ["-nodes", "-x"], fixed: true },
      { name: "subject", value: { o: "Quarry", c: "NL" }, fixed: true },
    ];
  });
  assert.deepEqual(
    [...p.fixed],
    [
      ["cn", 0],
      ["flags", 2],
      ["subject", 3],
    ],
  );
  assert.deepEqual(p.params[0], { name: "cn", value: "example.com" }, "the mark is not a param value");
  const P = (name: string, value: Param["value"]): Param => ({ name, value });
  const cases: [string, Param[], RegExp | undefined][] = [
    ["none given", [], undefined],
    ["an unfixed param", [P("days", "1")], undefined],
    ["a fixed param's own value", [P("cn", "example.com")], undefined],
    ["the same array", [P("flags", ["-nodes", "-x"])], undefined],
    ["the same object, keys in another order", [P("subject", { c: "NL", o: "Quarry" })], undefined],
    [
      "another value",
      [P("days", "1"), P("cn", "evil.example")],
      /^param "cn" is fixed by Pipe "gencert" \(spec.params\[0\].fixed\); a request may not give it another value$/,
    ],
    ["another array", [P("flags", ["-nodes"])], /param "flags" is fixed .*spec.params\[2\]/],
    ["another type", [P("flags", "-nodes -x")], /param "flags" is fixed/],
    ["an object with a key more", [P("subject", { o: "Quarry", c: "NL", cn: "x" })], /param "subject"/],
  ];
  for (const [name, given, want] of cases) {
    const got = checkFixedParams(p, given, 'Pipe "gencert"');
    if (!want) assert.equal(got, undefined, name);
    else {
      assert.equal(got?.reason, "Forbidden", name);
      assert.match(got?.message ?? "", want, name);
    }
  }
});
