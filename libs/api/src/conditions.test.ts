import assert from "node:assert/strict";
import { test } from "node:test";
import { getCondition, isDone } from "./conditions.ts";
import type { Condition, ResolutionRequest } from "./types.ts";

function rr(conditions?: Condition[]): ResolutionRequest {
  const obj: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "r", namespace: "ns" },
    spec: {},
  };
  if (conditions) obj.status = { conditions };
  return obj;
}

test("getCondition finds by type on an object or on its status", () => {
  const c: Condition = { type: "Succeeded", status: "Unknown", reason: "ResolutionInProgress" };
  const obj = rr([{ type: "Other", status: "True" }, c]);
  assert.equal(getCondition(obj, "Succeeded"), c);
  assert.equal(getCondition(obj.status, "Succeeded"), c);
  assert.equal(getCondition(obj, "Missing"), undefined);
  assert.equal(getCondition(rr(), "Succeeded"), undefined);
  assert.equal(getCondition(undefined, "Succeeded"), undefined);
});

test("isDone: Succeeded True or False", () => {
  assert.equal(isDone(rr([{ type: "Succeeded", status: "True" }])), true);
  assert.equal(isDone(rr([{ type: "Succeeded", status: "False" }])), true);
  assert.equal(isDone(rr([{ type: "Succeeded", status: "Unknown" }])), false);
  assert.equal(isDone(rr([{ type: "Other", status: "True" }])), false);
  assert.equal(isDone(rr()), false);
  assert.equal(isDone(rr([{ type: "Succeeded", status: "False" }]).status), true);
});
