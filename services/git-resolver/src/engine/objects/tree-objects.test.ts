import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { commitTree, parseTree } from "./tree-objects.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);

describe("tree objects", () => {
  test("entries with modes as ls-tree prints them", () => {
    const entry = (mode: string, name: string, hex: string) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(hex, "hex")]);
    const data = Buffer.concat([
      entry("100644", "task.yaml", A),
      entry("40000", "tasks", B),
      entry("120000", "link", A),
      entry("160000", "sub", B),
    ]);
    const t = parseTree(data, "sha1");
    assert.deepEqual(t.get("task.yaml"), { mode: "100644", type: "blob", oid: A });
    assert.deepEqual(t.get("tasks"), { mode: "040000", type: "tree", oid: B });
    assert.deepEqual(t.get("link"), { mode: "120000", type: "blob", oid: A });
    assert.deepEqual(t.get("sub"), { mode: "160000", type: "commit", oid: B });
    assert.throws(() => parseTree(data.subarray(0, data.length - 3), "sha1"), /malformed/);
  });

  test("a commit's root tree", () => {
    assert.equal(commitTree(Buffer.from(`tree ${A}\nparent ${B}\nauthor x\n\nmsg\n`)), A);
    assert.throws(() => commitTree(Buffer.from("nope")), /malformed/);
  });
});
