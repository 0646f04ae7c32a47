import assert from "node:assert/strict";
import { test } from "node:test";
import { pipes } from "@quarry/api";
import type { KubeObject } from "@quarry/kube";
import { FakeKubeClient } from "@quarry/kube/testing";
import type { PipeResult } from "./objects.ts";
import { type ReceiptObject, readReceipt, receiptObject, recorded } from "./receipt.ts";
import { cachedLookup } from "./sources.ts";

const request = { namespace: "ns", name: "r1", uid: "uid-1" };
const owner = {
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  name: "r1",
  uid: "uid-1",
  controller: true,
};
const result: PipeResult = { key: "k", kind: "Secret", name: "run-p-k", hmacSha256: "a".repeat(64) };

test("receiptObject round-trips through readReceipt; anything else is not this request's receipt", () => {
  const obj = receiptObject(request, "p", owner, { state: "storing", results: [result] });
  assert.match(obj.metadata.name ?? "", /^r1-pipe-[0-9a-f]{10}$/, "named like the request's pod");
  assert.deepEqual(readReceipt(obj, "uid-1"), { ok: true, receipt: { state: "storing", results: [result] } });
  const broken: [string, (o: ReceiptObject) => void, RegExp][] = [
    ["another request's", () => undefined, /is not this request's pipe receipt/],
    ["not labelled", (o) => delete o.metadata.labels?.["quarry.dev/pipe-receipt"], /not this request's/],
    ["no state", (o) => delete o.data?.state, /has no valid state/],
    ["bad results", (o) => Object.assign(o.data ?? {}, { "results.json": "{" }), /results.json/],
    [
      "a malformed entry",
      (o) =>
        Object.assign(o.data ?? {}, { "results.json": '[{"key":"k","kind":"Pod","name":"n","sha256":"x"}]' }),
      /malformed entry/,
    ],
  ];
  for (const [name, change, message] of broken) {
    const o = structuredClone(obj);
    change(o);
    const got = readReceipt(o, name === "another request's" ? "uid-2" : "uid-1");
    assert.equal(got.ok, false, name);
    if (!got.ok) assert.match(got.message, message, name);
  }
});

test("recorded: absent, the same digest, or another digest", () => {
  const receipt = { state: "storing" as const, results: [result] };
  assert.equal(recorded(undefined, result), undefined);
  assert.equal(recorded(receipt, { ...result, name: "other" }), undefined);
  assert.deepEqual(recorded(receipt, result), { ok: true });
  const changed = recorded(receipt, { ...result, hmacSha256: "b".repeat(64) });
  assert.equal(changed?.ok, false);
  assert.match(changed?.ok === false ? changed.message : "", /from a file with another digest/);
  // a record an older resolver wrote (a Secret's plain sha256) never matches a keyed digest
  const legacy = {
    state: "storing" as const,
    results: [{ ...result, hmacSha256: undefined, sha256: "a".repeat(64) }],
  };
  assert.equal(recorded(legacy, result)?.ok, false);
});

test("cachedLookup: the cache first, then one GET; 404 is undefined", async () => {
  const client = new FakeKubeClient();
  client.seed(pipes, { metadata: { name: "in-api", namespace: "ns" } });
  const cached: KubeObject = { metadata: { name: "in-cache", namespace: "ns" } };
  const lookup = cachedLookup(client, {
    Pipe: { get: (ns, name) => (ns === "ns" && name === "in-cache" ? cached : undefined) },
  });
  const signal = AbortSignal.timeout(1000);
  assert.equal(await lookup("Pipe", "ns", "in-cache", signal), cached);
  assert.equal(client.calls.length, 0, "a hit makes no API call");
  assert.equal((await lookup("Pipe", "ns", "in-api", signal))?.metadata.name, "in-api");
  assert.equal(await lookup("Pipe", "ns", "nowhere", signal), undefined);
  assert.equal(await lookup("ClusterPipeStrategy", "ns", "nowhere", signal), undefined);
  assert.deepEqual(
    client.calls.map((c) => `${c.verb} ${c.resource} ${c.namespace}/${c.name}`),
    ["get pipes ns/in-api", "get pipes ns/nowhere", "get clusterpipestrategies /nowhere"],
  );
});
