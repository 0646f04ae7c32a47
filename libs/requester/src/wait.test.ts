// waitFor against a scripted apiserver: how it resumes, relists and backs off.
// (The real apiserver paths are covered by e2e/scenarios/requester-wait-*.)
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Condition, ResolutionRequest } from "@quarry/api";
import { ApiError, type WatchEvent } from "@quarry/kube";
import { type WatchingClient, waitFor } from "./wait.ts";

function rr(rv: string, cond?: Condition): ResolutionRequest {
  const r: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name: "git-x", namespace: "ns", resourceVersion: rv },
    spec: {},
  };
  if (cond) r.status = { conditions: [cond] };
  return r;
}
const failed = (rv: string) =>
  rr(rv, { type: "Succeeded", status: "False", reason: "ResolutionFailed", message: "m" });
const pendingAt = (rv: string) =>
  rr(rv, { type: "Succeeded", status: "Unknown", reason: "ResolutionInProgress" });

type Step = WatchEvent<ResolutionRequest> | Error;

/** lists: answers to successive LISTs; watches: events of successive watches (an Error is thrown there). */
function scripted(lists: ResolutionRequest[][], watches: Step[][]) {
  const calls: string[] = [];
  let listRv = 100;
  const client = {
    async list() {
      calls.push("list");
      const items = lists.shift();
      if (!items) throw new Error("unexpected list");
      return { items, metadata: { resourceVersion: String(listRv++) } };
    },
    async *watch(_rt: unknown, _ns: unknown, opts: { resourceVersion?: string; fieldSelector?: string }) {
      calls.push(`watch@${opts.resourceVersion} ${opts.fieldSelector}`);
      const steps = watches.shift();
      if (!steps) throw new Error("unexpected watch");
      for (const s of steps) {
        if (s instanceof Error) throw s;
        yield s;
      }
    },
  } as unknown as WatchingClient;
  return { client, calls };
}

test("a finished request answers from the first LIST, no watch", async () => {
  const { client, calls } = scripted([[failed("5")]], []);
  assert.equal((await waitFor(client, "ns", "git-x")).state, "failed");
  assert.deepEqual(calls, ["list"]);
});

test("watches this one object from the LIST's resourceVersion; a closed stream resumes from the last one seen", async () => {
  const { client, calls } = scripted(
    [[pendingAt("5")]],
    [
      [
        { type: "MODIFIED", object: pendingAt("7") },
        { type: "BOOKMARK", object: rr("9") },
      ],
      [{ type: "MODIFIED", object: failed("12") }],
    ],
  );
  assert.equal((await waitFor(client, "ns", "git-x")).state, "failed");
  assert.deepEqual(calls, ["list", "watch@100 metadata.name=git-x", "watch@9 metadata.name=git-x"]);
});

test("410 Gone (event or HTTP) relists at once", async () => {
  const gone = { type: "ERROR", object: { kind: "Status", code: 410, message: "too old" } };
  const { client, calls } = scripted(
    [[pendingAt("5")], [pendingAt("5")], [failed("30")]],
    [[gone as unknown as Step], [new ApiError(410, "Expired", "too old")]],
  );
  const started = Date.now();
  assert.equal((await waitFor(client, "ns", "git-x")).state, "failed");
  assert.deepEqual(
    calls.map((c) => c.split(" ")[0]),
    ["list", "watch@100", "list", "watch@101", "list"],
  );
  assert.ok(Date.now() - started < 150, "no backoff after 410");
});

test("other errors relist after a backoff", async () => {
  const { client, calls } = scripted([[pendingAt("5")], [failed("30")]], [[new Error("socket hang up")]]);
  const started = Date.now();
  assert.equal((await waitFor(client, "ns", "git-x")).state, "failed");
  assert.deepEqual(
    calls.map((c) => c.split(" ")[0]),
    ["list", "watch@100", "list"],
  );
  assert.ok(Date.now() - started >= 180, "backed off before relisting");
});

test("DELETED while waiting rejects with RequestNotFoundError", async () => {
  const { client } = scripted([[pendingAt("5")]], [[{ type: "DELETED", object: pendingAt("8") }]]);
  await assert.rejects(waitFor(client, "ns", "git-x"), { name: "RequestNotFoundError", deleted: true });
});

test("a 403 (no RBAC to list/watch) rejects instead of retrying forever", async () => {
  const { client, calls } = scripted([[pendingAt("5")]], [[new ApiError(403, "Forbidden", "cannot watch")]]);
  await assert.rejects(waitFor(client, "ns", "git-x"), { name: "ApiError", status: 403 });
  assert.deepEqual(
    calls.map((c) => c.split(" ")[0]),
    ["list", "watch@100"],
  );
});
