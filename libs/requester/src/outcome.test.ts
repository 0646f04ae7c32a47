import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest, ResolutionRequestStatus } from "@quarry/api";
import { decodeStdBase64, isTerminal, readOutcome } from "./outcome.ts";

function rr(status?: ResolutionRequestStatus): ResolutionRequest {
  const r: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "git-x", namespace: "ns" },
    spec: {},
  };
  if (status) r.status = status;
  return r;
}

const yaml = "apiVersion: tekton.dev/v1\nkind: Task\n";
const b64 = Buffer.from(yaml).toString("base64");

test("no status, or no condition yet: pending", () => {
  assert.deepEqual(readOutcome(rr()), { state: "pending" });
  assert.deepEqual(readOutcome(rr({})), { state: "pending" });
});

test("Unknown carries its reason and message", () => {
  const o = readOutcome(
    rr({
      conditions: [
        {
          type: "Succeeded",
          status: "Unknown",
          reason: "ResolutionInProgress",
          message: "waiting for resolver",
        },
      ],
    }),
  );
  assert.deepEqual(o, { state: "pending", reason: "ResolutionInProgress", message: "waiting for resolver" });
  assert.equal(isTerminal(o), false);
});

test("data present but the condition still Unknown is pending (the condition decides, as in Tekton)", () => {
  const o = readOutcome(rr({ data: b64, conditions: [{ type: "Succeeded", status: "Unknown" }] }));
  assert.equal(o.state, "pending");
});

test("True: data decoded, annotations and refSource passed on", () => {
  const refSource = {
    uri: "git+https://example.com/r.git",
    digest: { sha1: "abc" },
    entryPoint: "task.yaml",
  };
  const o = readOutcome(
    rr({
      data: b64,
      annotations: { "resolution.tekton.dev/content-type": "application/x-yaml" },
      refSource,
      conditions: [{ type: "Succeeded", status: "True" }],
    }),
  );
  assert.equal(o.state, "resolved");
  if (o.state !== "resolved") return;
  assert.equal(new TextDecoder().decode(o.data), yaml);
  assert.equal(Object.getPrototypeOf(o.data), Uint8Array.prototype);
  assert.deepEqual(o.annotations, { "resolution.tekton.dev/content-type": "application/x-yaml" });
  assert.deepEqual(o.refSource, refSource);
});

test("True: the deprecated status.source stands in for a missing refSource", () => {
  const source = { uri: "oci://r/b", digest: { sha256: "d" } };
  const o = readOutcome(rr({ data: b64, source, conditions: [{ type: "Succeeded", status: "True" }] }));
  assert.equal(o.state === "resolved" && o.refSource, source);
});

test("True without data resolves to empty bytes, like Tekton's client", () => {
  const o = readOutcome(rr({ conditions: [{ type: "Succeeded", status: "True" }] }));
  assert.deepEqual(o, { state: "resolved", data: new Uint8Array(), annotations: {} });
});

test("True with data that is not base64 is a terminal failure, not a crash or an endless wait", () => {
  const o = readOutcome(rr({ data: "not base64!", conditions: [{ type: "Succeeded", status: "True" }] }));
  assert.equal(o.state, "failed");
  assert.equal(o.state === "failed" && o.reason, "ResolutionFailed");
});

test("False: Tekton's reason, Quarry's finer reason, the message", () => {
  const o = readOutcome(
    rr({
      annotations: { "quarry.dev/reason": "NotFound" },
      conditions: [
        {
          type: "Succeeded",
          status: "False",
          reason: "ResolutionFailed",
          message: 'path "task.yaml" not found',
        },
      ],
    }),
  );
  assert.deepEqual(o, {
    state: "failed",
    reason: "ResolutionFailed",
    quarryReason: "NotFound",
    message: 'path "task.yaml" not found',
  });
  assert.equal(isTerminal(o), true);
});

test("False wins over data (a request failed for a timeout stays failed)", () => {
  const o = readOutcome(
    rr({
      data: b64,
      conditions: [{ type: "Succeeded", status: "False", reason: "ResolutionTimedOut", message: "m" }],
    }),
  );
  assert.deepEqual(o, { state: "failed", reason: "ResolutionTimedOut", message: "m" });
});

test("False without a reason reads as ResolutionFailed", () => {
  const o = readOutcome(rr({ conditions: [{ type: "Succeeded", status: "False" }] }));
  assert.deepEqual(o, { state: "failed", reason: "ResolutionFailed", message: "" });
});

test("decodeStdBase64: strict standard alphabet with padding; CR/LF skipped like Go", () => {
  assert.deepEqual(decodeStdBase64(""), new Uint8Array());
  assert.deepEqual(decodeStdBase64("aGk="), new Uint8Array([104, 105]));
  assert.deepEqual(decodeStdBase64("aG\r\nk="), new Uint8Array([104, 105]));
  assert.equal(decodeStdBase64("aGk"), undefined); // unpadded
  assert.equal(decodeStdBase64("aG-_"), undefined); // URL alphabet
  assert.equal(decodeStdBase64("aGk=aGk="), undefined); // padding in the middle
});
