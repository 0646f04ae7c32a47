import assert from "node:assert/strict";
import { test } from "node:test";
import { formatReference, InvalidReferenceError, parseReference, repositoryName } from "./reference.ts";

const D = `sha256:${"a".repeat(64)}`;

const good: [string, { registry: string; repository: string; tag?: string; digest?: string }][] = [
  ["alpine", { registry: "docker.io", repository: "library/alpine", tag: "latest" }],
  ["team/tool:v1", { registry: "docker.io", repository: "team/tool", tag: "v1" }],
  ["index.docker.io/team/tool", { registry: "docker.io", repository: "team/tool", tag: "latest" }],
  ["127.0.0.1:5000/ns/b:v1", { registry: "127.0.0.1:5000", repository: "ns/b", tag: "v1" }],
  ["localhost/b", { registry: "localhost", repository: "b", tag: "latest" }],
  [`gcr.io/p/catalog/git-clone@${D}`, { registry: "gcr.io", repository: "p/catalog/git-clone", digest: D }],
  [`gcr.io/p/x:0.1@${D}`, { registry: "gcr.io", repository: "p/x", tag: "0.1", digest: D }],
  [
    "registry.example:443/a__b/c-d.e:1.2-rc_3",
    { registry: "registry.example:443", repository: "a__b/c-d.e", tag: "1.2-rc_3" },
  ],
];

for (const [input, want] of good) {
  test(`parseReference ${input}`, () => {
    assert.deepEqual({ ...parseReference(input) }, want);
  });
}

const bad: [string, RegExp][] = [
  ["", /empty/],
  ["https://gcr.io/a/b", /scheme/],
  ["gcr.io/A/b", /repository/],
  ["gcr.io/a/b:", /tag/],
  ["gcr.io/a/b@sha256:abc", /digest/],
  [`gcr.io/a/b@sha512:${"a".repeat(128)}`, /sha256 only/],
  [`gcr.io/a/b@sha256:${"A".repeat(64)}`, /lower-case hex/],
  ["gcr.io/a b", /whitespace/],
  ["gcr.io//b", /repository/],
  [`gcr.io/${"a".repeat(260)}`, /longer than/],
];

for (const [input, want] of bad) {
  test(`parseReference rejects ${JSON.stringify(input).slice(0, 40)}`, () => {
    assert.throws(
      () => parseReference(input),
      (err: unknown) => err instanceof InvalidReferenceError && want.test(err.message),
    );
  });
}

test("repositoryName and formatReference drop nothing they should keep", () => {
  const ref = parseReference(`127.0.0.1:5000/ns/b:v1@${D}`);
  assert.equal(repositoryName(ref), "127.0.0.1:5000/ns/b");
  assert.equal(formatReference(ref), `127.0.0.1:5000/ns/b:v1@${D}`);
});
