import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { formatRequests } from "./get.ts";

const now = Date.parse("2025-06-01T12:00:00Z");

function rr(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  createdSecondsAgo: number,
  condition?: { status: "True" | "False" | "Unknown"; reason?: string },
): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: {
      name,
      namespace,
      labels,
      creationTimestamp: new Date(now - createdSecondsAgo * 1000).toISOString(),
    },
    spec: {},
    status: condition ? { conditions: [{ type: "Succeeded", ...condition }] } : undefined,
  };
}

const items = [
  rr("b", "nonesuch", { "resolution.tekton.dev/type": "nonesuch" }, 192, {
    status: "False",
    reason: "ResolutionTimedOut",
  }),
  rr("a", "git-task", { "resolution.tekton.dev/type": "git" }, 5, { status: "True" }),
  rr("a", "alias", { "resolution.tekton.dev/resolver": "in-cluster" }, 0),
];

test("one namespace: kubectl's columns, sorted by name, blanks where a field is unset", () => {
  assert.equal(
    formatRequests(items.slice(1), now, false),
    [
      "NAME       SUCCEEDED   REASON   RESOLVER   AGE",
      "alias                                      0s",
      "git-task   True                 git        5s",
      "",
    ].join("\n"),
  );
});

test("all namespaces: a NAMESPACE column first, sorted by namespace then name", () => {
  const lines = formatRequests(items, now, true).split("\n");
  assert.match(lines[0]!, /^NAMESPACE\s+NAME\s+SUCCEEDED\s+REASON\s+RESOLVER\s+AGE$/);
  assert.deepEqual(
    lines.slice(1, 4).map((l) => l.split(/\s+/).slice(0, 2)),
    [
      ["a", "alias"],
      ["a", "git-task"],
      ["b", "nonesuch"],
    ],
  );
  assert.match(lines[3]!, /False\s+ResolutionTimedOut\s+nonesuch\s+3m12s$/);
});
