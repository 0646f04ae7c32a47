import assert from "node:assert/strict";
import { test } from "node:test";
import { clusterPolicy, namespaceVerdict } from "./config.ts";

test("clusterPolicy reads Tekton's keys, trims lists, rejects unknown kinds", () => {
  const p = clusterPolicy({
    "default-kind": "Pipeline",
    "allowed-namespaces": " a, b ,,c ",
    "blocked-namespaces": "x",
    "default-namespace": " shared ",
  });
  assert.deepEqual(p, {
    defaultKind: "pipeline",
    defaultNamespace: "shared",
    allowed: ["a", "b", "c"],
    blocked: ["x"],
  });
  assert.deepEqual(clusterPolicy({}), {
    defaultKind: "task",
    defaultNamespace: undefined,
    allowed: undefined,
    blocked: undefined,
  });
  // as Tekton: "" is unset, but " " is set and lists no namespace
  assert.deepEqual(clusterPolicy({ "allowed-namespaces": "", "blocked-namespaces": " , " }).blocked, []);
  assert.equal(clusterPolicy({ "allowed-namespaces": "" }).allowed, undefined);
  assert.throws(() => clusterPolicy({ "default-kind": "trigger" }), /default-kind/);
});

// [case, namespace read, allowed-namespaces, blocked-namespaces, the refusal or "" when read];
// the request is in namespace "foo", as in Tekton's tests
type Row = [string, string, string | undefined, string | undefined, string];

// Tekton v1.15's documented cases (pkg/resolution/resolver/cluster resolver_test.go and
// docs/cluster-resolver.md), the request in namespace "foo" as there; Quarry must agree on each.
const tektonRows: Row[] = [
  [
    "not in allowed namespaces",
    "foo",
    "abc,def",
    undefined,
    "access to specified namespace foo is not allowed",
  ],
  ["in blocked namespaces", "foo", undefined, "foo,bar", "access to specified namespace foo is blocked"],
  ["blocked by star", "foo", undefined, "*", "only explicit allowed access to namespaces is allowed"],
  ["blocked by star but allowed explicitly", "foo", "foo", "*", ""],
  ["whitespace in allowed namespaces", "bar", "foo, bar", undefined, ""],
  [
    "whitespace in blocked namespaces",
    "prod",
    undefined,
    "prod , staging",
    "access to specified namespace prod is blocked",
  ],
  [
    "combined wildcard in blocked namespaces",
    "foo",
    undefined,
    "*,kube-system",
    "only explicit allowed access to namespaces is allowed",
  ],
  [
    "reconcile: not in allowed namespaces",
    "other-ns",
    "foo,bar",
    undefined,
    "access to specified namespace other-ns is not allowed",
  ],
  [
    "reconcile: in blocked namespaces",
    "other-ns",
    undefined,
    "foo,other-ns,bar",
    "access to specified namespace other-ns is blocked",
  ],
  // what follows from Tekton's order of checks
  [
    "blocked entry wins over the same allowed entry",
    "foo",
    "foo",
    "foo",
    "access to specified namespace foo is blocked",
  ],
  [
    "blocked entry wins over * blocked and allowed",
    "foo",
    "foo",
    "*,foo",
    "access to specified namespace foo is blocked",
  ],
  ["a blocked list alone leaves every other namespace open", "shared", undefined, "kube-system", ""],
  [
    "a set allowed list refuses the request's own namespace too",
    "foo",
    "shared",
    undefined,
    "access to specified namespace foo is not allowed",
  ],
  [
    "* blocks the request's own namespace too",
    "foo",
    undefined,
    "*",
    "only explicit allowed access to namespaces is allowed",
  ],
  [
    "a set list of no namespace refuses all",
    "foo",
    " , ",
    undefined,
    "access to specified namespace foo is not allowed",
  ],
  [
    "an empty entry names no namespace",
    "foo",
    "a,,b",
    undefined,
    "access to specified namespace foo is not allowed",
  ],
];

// Quarry's differences, where Tekton would open every namespace (neither key set) or none (* allowed)
const quarryRows: Row[] = [
  ["neither key set: own namespace", "foo", undefined, undefined, ""],
  [
    "neither key set: another namespace",
    "shared",
    undefined,
    undefined,
    "access to specified namespace shared is not allowed: with neither allowed-namespaces nor blocked-namespaces set, a request reads only its own namespace (foo)",
  ],
  [
    "empty values are unset",
    "shared",
    "",
    "",
    "access to specified namespace shared is not allowed: with neither allowed-namespaces nor blocked-namespaces set, a request reads only its own namespace (foo)",
  ],
  ["* allowed lists every namespace", "shared", "*", undefined, ""],
  ["* allowed is explicit against * blocked", "shared", "*", "*", ""],
  [
    "* allowed loses to a blocked entry",
    "shared",
    "*",
    "shared",
    "access to specified namespace shared is blocked",
  ],
];

test("namespaceVerdict: Tekton's verdict and message on every documented case", () => {
  for (const [what, target, allowed, blocked, want] of [...tektonRows, ...quarryRows]) {
    const config: Record<string, string> = {};
    if (allowed !== undefined) config["allowed-namespaces"] = allowed;
    if (blocked !== undefined) config["blocked-namespaces"] = blocked;
    const verdict = namespaceVerdict(target, "foo", clusterPolicy(config));
    assert.equal(verdict.allowed ? "" : verdict.message, want, what);
  }
});
