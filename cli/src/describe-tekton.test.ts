import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun, ResolutionRequest } from "@quarry/api";
import { describeTektonRun, ownedBy, runTree, type TektonRun } from "./describe-tekton.ts";

const NOW = Date.parse("2026-01-01T00:10:00Z");
const T = "2026-01-01T00:00:00Z";
const owner = (kind: string, name: string, uid: string) => [{ apiVersion: "tekton.dev/v1", kind, name, uid }];

function request(name: string, uid: string, kind: string, ok: boolean): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: {
      name,
      namespace: "ci",
      creationTimestamp: T,
      labels: { "resolution.tekton.dev/type": "git" },
      ownerReferences: owner(kind, "x", uid),
    },
    spec: { params: [] },
    status: {
      conditions: [
        ok
          ? { type: "Succeeded", status: "True" }
          : { type: "Succeeded", status: "False", reason: "ResolutionFailed", message: "path not found" },
      ],
      ...(!ok && { annotations: { "quarry.dev/reason": "NotFound" } }),
    },
  } as ResolutionRequest;
}

test("a PipelineRun: its own requests, its child runs and theirs, and the chain down to a failed one", () => {
  const pr: TektonRun = {
    apiVersion: "tekton.dev/v1",
    kind: "PipelineRun",
    metadata: { name: "p", namespace: "ci", uid: "u-p", creationTimestamp: T },
    spec: { pipelineRef: { resolver: "git", params: [{ name: "pathInRepo", value: "p.yaml" }] } },
    status: {
      conditions: [
        { type: "Succeeded", status: "False", reason: "Failed", message: "Tasks Completed: 1 (Failed: 1)" },
      ],
    },
  };
  const tr = {
    apiVersion: "tekton.dev/v1",
    kind: "TaskRun",
    metadata: {
      name: "p-build",
      namespace: "ci",
      uid: "u-t",
      ownerReferences: owner("PipelineRun", "p", "u-p"),
      labels: { "tekton.dev/pipelineTask": "build" },
    },
    status: { conditions: [{ type: "Succeeded", status: "False", reason: "TaskRunResolutionFailed" }] },
  } as TektonRun;
  const other = {
    ...tr,
    metadata: { ...tr.metadata, name: "unrelated", uid: "u-o", ownerReferences: [] },
  } as TektonRun;
  const requests = [request("rr-p", "u-p", "PipelineRun", true), request("rr-t", "u-t", "TaskRun", false)];
  const tree = runTree(pr, requests, [tr, other] as (TektonRun | AnyRun)[]);
  assert.deepEqual(
    tree.children.map((c) => c.run.metadata.name),
    ["p-build"],
  );
  assert.deepEqual(
    ownedBy(requests, pr).map((r) => r.metadata.name),
    ["rr-p"],
  );

  const text = describeTektonRun(tree, [], NOW);
  assert.match(text, /^Kind:\s+PipelineRun \(tekton\.dev\/v1\)$/m);
  assert.match(text, /^ {2}Resolver:\s+git$/m);
  assert.match(text, /^ {2}PipelineRun failed: Failed: Tasks Completed/m);
  assert.match(text, /^ {2}← ResolutionRequest rr-p succeeded$/m);
  assert.match(text, /^ {2}← TaskRun p-build failed: TaskRunResolutionFailed$/m);
  assert.match(text, /^ {4}← ResolutionRequest rr-t failed: ResolutionFailed \(NotFound\): path not found$/m);
  assert.match(
    text,
    /TaskRun\/p-build\s+rr-t\s+git\s+False ResolutionFailed \(NotFound\)\s+10m\s+path not found/,
  );
  assert.match(text, /^Child Runs:$/m);
  assert.match(text, /TaskRun\s+p-build\s+build\s+False\s+TaskRunResolutionFailed\s+1/);
});
