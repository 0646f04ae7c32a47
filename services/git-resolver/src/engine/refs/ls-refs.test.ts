import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { lsRefsBody, parseLsRefs } from "./ls-refs.ts";

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
