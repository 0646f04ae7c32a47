import assert from "node:assert/strict";
import { test } from "node:test";
import { classifyRevision, pickRef, refCandidates, type ServerRef } from "./revision.ts";

const SHA1 = "0123456789abcdef0123456789abcdef01234567";
const SHA256 = `${SHA1}0123456789abcdef01234567`;

test("classifyRevision", () => {
  const cases: [string, unknown][] = [
    [SHA1, { kind: "commit", sha: SHA1, format: "sha1" }],
    [SHA1.toUpperCase(), { kind: "commit", sha: SHA1, format: "sha1" }],
    [SHA256, { kind: "commit", sha: SHA256, format: "sha256" }],
    ["main", { kind: "ref", name: "main" }],
    ["v1.2.3", { kind: "ref", name: "v1.2.3" }],
    ["release/1.0", { kind: "ref", name: "release/1.0" }],
    ["refs/tags/v1", { kind: "ref", name: "refs/tags/v1" }],
    ["refs/pull/12/head", { kind: "ref", name: "refs/pull/12/head" }],
    ["HEAD", { kind: "ref", name: "HEAD" }],
    // an abbreviated id is a name: git cannot fetch by it, so it only matches a ref of that name
    ["0123456", { kind: "ref", name: "0123456" }],
    [SHA1.slice(0, 39), { kind: "ref", name: SHA1.slice(0, 39) }],
    ["", { error: "must not be empty" }],
    ["-main", { error: 'must not start with "-" (got "-main")' }],
    ["--upload-pack=touch /tmp/x", { error: 'must not start with "-" (got "--upload-pack=touch /tmp/x")' }],
    [
      "a b",
      { error: '"a b" is not a valid branch, tag or ref name: contains whitespace or control characters' },
    ],
    [
      "a\nb",
      { error: '"a\\nb" is not a valid branch, tag or ref name: contains whitespace or control characters' },
    ],
    ["main~1", { error: '"main~1" is not a valid branch, tag or ref name: contains one of ~ ^ : ? * [ \\' }],
    [
      "main^{tree}",
      { error: '"main^{tree}" is not a valid branch, tag or ref name: contains one of ~ ^ : ? * [ \\' },
    ],
    [
      "HEAD:task.yaml",
      { error: '"HEAD:task.yaml" is not a valid branch, tag or ref name: contains one of ~ ^ : ? * [ \\' },
    ],
    ["a..b", { error: '"a..b" is not a valid branch, tag or ref name: contains ".."' }],
    ["main@{1}", { error: '"main@{1}" is not a valid branch, tag or ref name: contains "@{"' }],
    ["refs//x", { error: '"refs//x" is not a valid branch, tag or ref name: has an empty path component' }],
    ["/main", { error: '"/main" is not a valid branch, tag or ref name: has an empty path component' }],
    ["main.lock", { error: '"main.lock" is not a valid branch, tag or ref name: ends with "." or ".lock"' }],
    [
      "refs/.hidden",
      { error: '"refs/.hidden" is not a valid branch, tag or ref name: has a component starting with "."' },
    ],
  ];
  for (const [input, want] of cases) assert.deepEqual(classifyRevision(input), want, input);
});

test("refCandidates follows git's precedence", () => {
  assert.deepEqual(refCandidates("main"), ["refs/tags/main", "refs/heads/main"]);
  assert.deepEqual(refCandidates("heads/main"), [
    "refs/heads/main",
    "refs/tags/heads/main",
    "refs/heads/heads/main",
  ]);
  assert.deepEqual(refCandidates("refs/heads/main"), ["refs/heads/main"]);
  assert.deepEqual(refCandidates("HEAD"), ["HEAD"]);
});

test("pickRef", () => {
  const refs: ServerRef[] = [
    { ref: "HEAD", oid: "h" },
    { ref: "refs/heads/main", oid: "m" },
    { ref: "refs/heads/main-old", oid: "x" },
    { ref: "refs/heads/same", oid: "branch" },
    { ref: "refs/tags/same", oid: "tag" },
    { ref: "refs/tags/v2", oid: "tagobject", peeled: "c2" },
    { ref: "refs/heads/release/1.0", oid: "r" },
  ];
  const cases: [string, unknown][] = [
    ["main", { ref: "refs/heads/main", commit: "m" }],
    ["refs/heads/main", { ref: "refs/heads/main", commit: "m" }],
    ["heads/main", { ref: "refs/heads/main", commit: "m" }],
    ["same", { ref: "refs/tags/same", commit: "tag" }],
    ["refs/heads/same", { ref: "refs/heads/same", commit: "branch" }],
    ["v2", { ref: "refs/tags/v2", commit: "c2" }],
    ["release/1.0", { ref: "refs/heads/release/1.0", commit: "r" }],
    ["HEAD", { ref: "HEAD", commit: "h" }],
    ["mai", undefined],
    ["refs/heads/nope", undefined],
  ];
  for (const [name, want] of cases) assert.deepEqual(pickRef(refs, name), want, name);
});
