import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { newestCopy } from "./newest.ts";

const copy = (rv: string | undefined, uid = "u1"): ResolutionRequest => ({
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: { name: "r", namespace: "ns", uid, resourceVersion: rv },
  spec: {},
});

const cases: {
  name: string;
  snapshot: ResolutionRequest;
  others: (ResolutionRequest | undefined)[];
  want: string | undefined;
}[] = [
  { name: "no other copy: the snapshot", snapshot: copy("5"), others: [undefined], want: "5" },
  { name: "a newer informer copy wins", snapshot: copy("5"), others: [copy("7")], want: "7" },
  { name: "an older copy never replaces the snapshot", snapshot: copy("9"), others: [copy("7")], want: "9" },
  {
    name: "the newest of several",
    snapshot: copy("5"),
    others: [copy("8"), copy("12"), copy("10")],
    want: "12",
  },
  { name: "numeric, not lexical, order", snapshot: copy("9"), others: [copy("10")], want: "10" },
  {
    name: "another object of the same name (recreated) is ignored",
    snapshot: copy("5"),
    others: [copy("9", "u2")],
    want: "5",
  },
  {
    name: "a non-numeric resourceVersion is not compared",
    snapshot: copy("5"),
    others: [copy("abc")],
    want: "5",
  },
  {
    name: "a snapshot without resourceVersion stays",
    snapshot: copy(undefined),
    others: [copy("3")],
    want: undefined,
  },
];

for (const c of cases)
  test(c.name, () => {
    assert.equal(newestCopy(c.snapshot, ...c.others).metadata.resourceVersion, c.want);
  });
