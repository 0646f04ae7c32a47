import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { testRequest, testTask, verdict } from "./helm-test.ts";

const NAME = "quarry-helm-test-abc123";
const done = (status: ResolutionRequest["status"]): ResolutionRequest => ({
  ...testRequest("quarry-system", NAME),
  status,
});
const b64 = (s: string) => Buffer.from(s).toString("base64");

test("the request asks the cluster resolver for the test's own Task in the release namespace", () => {
  const rr = testRequest("quarry-system", NAME);
  assert.equal(rr.metadata.labels?.["resolution.tekton.dev/type"], "cluster");
  assert.deepEqual(rr.spec.params, [
    { name: "kind", value: "task" },
    { name: "name", value: NAME },
    { name: "namespace", value: "quarry-system" },
  ]);
  assert.equal(testTask("quarry-system", NAME).metadata.name, NAME);
});

const rows: { name: string; rr: ResolutionRequest; want: boolean | undefined; message?: RegExp }[] = [
  { name: "not done yet", rr: done(undefined), want: undefined },
  {
    name: "in progress",
    rr: done({ conditions: [{ type: "Succeeded", status: "Unknown", reason: "ResolutionInProgress" }] }),
    want: undefined,
  },
  {
    name: "resolved to the Task",
    rr: done({
      conditions: [{ type: "Succeeded", status: "True" }],
      data: b64(`apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: ${NAME}\n`),
    }),
    want: true,
  },
  {
    name: "resolved to something else",
    rr: done({
      conditions: [{ type: "Succeeded", status: "True" }],
      data: b64("apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: other\n"),
    }),
    want: false,
    message: /not Task quarry-helm-test-abc123/,
  },
  {
    name: "timed out: the reason and message are reported",
    rr: done({
      conditions: [
        {
          type: "Succeeded",
          status: "False",
          reason: "ResolutionTimedOut",
          message: "no resolver for type cluster answered within 1m0s",
        },
      ],
    }),
    want: false,
    message: /ResolutionTimedOut: no resolver for type cluster answered/,
  },
];
for (const row of rows) {
  test(`helm test verdict: ${row.name}`, () => {
    const v = verdict(row.rr, NAME);
    assert.equal(v?.ok, row.want);
    if (row.message) assert.match(v?.message ?? "", row.message);
  });
}
