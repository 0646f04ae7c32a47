import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { lsRefsBody, parseLsRefs } from "./ls-refs.ts";
import { commitTree, parseTree } from "./tree-objects.ts";

const pkt = (s: string) => (Buffer.byteLength(s) + 4).toString(16).padStart(4, "0") + s;
const A = "a".repeat(40);
const B = "b".repeat(40);

describe("ls-refs in one request", () => {
  test("the body asks for every candidate prefix with peeled tags in one command", () => {
    const body = lsRefsBody(["refs/tags/main", "refs/heads/main"], "sha1");
    assert.equal(
      body,
      `${pkt("command=ls-refs\n")}${pkt("agent=git/quarry-git-resolver\n")}0001${pkt("peel\n")}` +
        `${pkt("ref-prefix refs/tags/main\n")}${pkt("ref-prefix refs/heads/main\n")}0000`,
    );
    assert.equal(pkt("peel\n"), "0009peel\n");
    assert.match(lsRefsBody(["HEAD"], "sha256"), /object-format=sha256\n0001/);
    assert.doesNotMatch(body, /object-format/);
  });

  test("parses refs and peeled tags; an empty answer is no refs", () => {
    const answer = Buffer.from(
      `${pkt(`${A} refs/heads/main\n`)}${pkt(`${A} refs/tags/v1 peeled:${B}\n`)}0000`,
    );
    assert.deepEqual(parseLsRefs(answer), [
      { ref: "refs/heads/main", oid: A },
      { ref: "refs/tags/v1", oid: A, peeled: B },
    ]);
    assert.deepEqual(parseLsRefs(Buffer.from("0000")), []);
  });

  test("anything else is an error (the caller asks the old way)", () => {
    assert.ok(parseLsRefs(Buffer.from(`${pkt("ERR upload-pack: not our ref\n")}0000`)) instanceof Error);
    assert.ok(parseLsRefs(Buffer.from("001e# service=git-upload-pack\n0000")) instanceof Error);
    assert.ok(parseLsRefs(Buffer.from(pkt(`${A} refs/heads/main\n`))) instanceof Error, "no flush");
    assert.ok(parseLsRefs(Buffer.from("<html>")) instanceof Error);
  });
});

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
