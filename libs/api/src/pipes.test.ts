// A resolved pipe request's status.data entries: one digest each, a Secret's keyed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pipeResultsOf } from "./pipes.ts";

test("pipeResultsOf: a ConfigMap's sha256, a Secret's hmacSha256 (or the plain sha256 of older resolvers)", () => {
  const cm = { key: "crt", kind: "ConfigMap", name: "r-p-crt", sha256: "a" };
  const secret = { key: "key", kind: "Secret", name: "r-p-key", hmacSha256: "b" };
  const legacy = { key: "key", kind: "Secret", name: "r-p-key", sha256: "c" };
  assert.deepEqual(pipeResultsOf([cm, secret, legacy]), [cm, secret, legacy]);
  assert.deepEqual(pipeResultsOf([]), []);
  const bad: unknown[] = [
    "x",
    [null],
    [{ ...cm, kind: "Pod" }],
    [{ key: "crt", kind: "ConfigMap", name: "n" }],
    [{ ...cm, hmacSha256: "b" }],
    [{ ...secret, sha256: "a" }],
    [{ key: "k", kind: "Secret", name: "n", hmacSha256: 1 }],
    [{ ...cm, name: 3 }],
  ];
  for (const list of bad) assert.equal(pipeResultsOf(list), undefined, JSON.stringify(list));
});
