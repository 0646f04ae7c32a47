import assert from "node:assert/strict";
import { test } from "node:test";
import type { AnyRun, ResolutionRequest } from "@quarry/api";
import {
  durationText,
  formatSummary,
  MAX_REASON,
  requestOutcome,
  runOutcome,
  shortReason,
} from "./summary.ts";

const condition = (status: "True" | "False" | "Unknown", reason: string) => ({
  type: "Succeeded",
  status,
  reason,
  lastTransitionTime: "2026-01-01T00:00:00Z",
});

function request(status: ResolutionRequest["status"]): ResolutionRequest {
  return {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "x", namespace: "ns" },
    spec: { params: [] },
    status,
  };
}

test("the summary is a table under a heading: a column per field, each row's duration last", () => {
  const text = formatSummary([
    {
      step: "setup",
      asked: "start the embedded control plane",
      outcome: "done",
      reason: "",
      durationMs: 3210,
    },
    {
      step: "(2)",
      asked: "a path git does not have",
      outcome: "Failed",
      reason: "ResolutionFailed (NotFound)",
      durationMs: 312,
    },
    { step: "teardown", asked: "stop everything", outcome: "done", reason: "", durationMs: 12_345 },
  ]);
  assert.equal(
    text,
    [
      "Summary:",
      "STEP       ASKED                              OUTCOME   REASON                        DURATION",
      "setup      start the embedded control plane   done      -                             3.21s",
      "(2)        a path git does not have           Failed    ResolutionFailed (NotFound)   0.31s",
      "teardown   stop everything                    done      -                             12.3s",
      "",
    ].join("\n"),
  );
});

test("durations: two decimals below ten seconds, one above", () => {
  assert.equal(durationText(0), "0.00s");
  assert.equal(durationText(312), "0.31s");
  assert.equal(durationText(9_994), "9.99s");
  assert.equal(durationText(10_000), "10.0s");
  assert.equal(durationText(61_250), "61.3s");
});

test("a reason is one line, cut with an ellipsis past the limit", () => {
  assert.equal(shortReason("first line\nstack trace"), "first line");
  const long = "x".repeat(MAX_REASON + 10);
  const cut = shortReason(long);
  assert.equal([...cut].length, MAX_REASON);
  assert.ok(cut.endsWith("…"));
  assert.equal(shortReason("x".repeat(MAX_REASON)), "x".repeat(MAX_REASON));
});

test("a request's outcome: Succeeded, or Failed with the reason and Quarry's finer one", () => {
  assert.deepEqual(requestOutcome(request({ conditions: [condition("True", "")] })), {
    outcome: "Succeeded",
    reason: "",
  });
  assert.deepEqual(
    requestOutcome(
      request({
        annotations: { "quarry.dev/reason": "NotFound" },
        conditions: [condition("False", "ResolutionFailed")],
      }),
    ),
    { outcome: "Failed", reason: "ResolutionFailed (NotFound)" },
  );
  assert.deepEqual(requestOutcome(request({ conditions: [condition("Unknown", "ResolutionInProgress")] })), {
    outcome: "pending",
    reason: "ResolutionInProgress",
  });
  assert.deepEqual(requestOutcome(request(undefined)), { outcome: "pending", reason: "" });
});

test("a run's outcome: its condition's status and reason", () => {
  const run = (status: "True" | "False" | "Unknown", reason: string) =>
    ({
      apiVersion: "tekton.dev/v1beta1",
      kind: "CustomRun",
      metadata: { name: "r", namespace: "ns" },
      spec: {},
      status: { conditions: [condition(status, reason)] },
    }) as unknown as AnyRun;
  assert.deepEqual(runOutcome(run("True", "DurationElapsed")), {
    outcome: "Succeeded",
    reason: "DurationElapsed",
  });
  assert.deepEqual(runOutcome(run("False", "CustomRunCancelled")), {
    outcome: "Failed",
    reason: "CustomRunCancelled",
  });
  assert.deepEqual(runOutcome(run("Unknown", "Running")), { outcome: "pending", reason: "Running" });
});
