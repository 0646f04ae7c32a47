import assert from "node:assert/strict";
import { test } from "node:test";
import { clusterPolicy, namespaceAllowed } from "./config.ts";

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
    allowed: [],
    blocked: [],
  });
  assert.throws(() => clusterPolicy({ "default-kind": "trigger" }), /default-kind/);
});

test("namespaceAllowed: own namespace by default, allow-list adds, block-list wins, * works", () => {
  const policy = (allowed: string[], blocked: string[]) => ({
    defaultKind: "task" as const,
    defaultNamespace: undefined,
    allowed,
    blocked,
  });
  const cases: [string, string, string[], string[], boolean][] = [
    ["own", "own", [], [], true],
    ["other", "own", [], [], false],
    ["shared", "own", ["shared"], [], true],
    ["any", "own", ["*"], [], true],
    ["shared", "own", ["*"], ["shared"], false],
    ["own", "own", [], ["own"], false],
    ["own", "own", ["*"], ["*"], false],
  ];
  for (const [target, from, allowed, blocked, want] of cases) {
    assert.equal(namespaceAllowed(target, from, policy(allowed, blocked)), want, `${target} from ${from}`);
  }
});
