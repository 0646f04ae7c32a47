import assert from "node:assert/strict";
import { test } from "node:test";
import { parseChallenges } from "./challenge.ts";

const cases: { header: string; want: ReturnType<typeof parseChallenges> }[] = [
  {
    header:
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/alpine:pull"',
    want: [
      {
        scheme: "bearer",
        params: {
          realm: "https://auth.docker.io/token",
          service: "registry.docker.io",
          scope: "repository:library/alpine:pull",
        },
      },
    ],
  },
  {
    header: 'Basic realm="Registry Realm"',
    want: [{ scheme: "basic", params: { realm: "Registry Realm" } }],
  },
  {
    header: 'Basic realm="x", Bearer realm="http://127.0.0.1:1/t", error="invalid_token"',
    want: [
      { scheme: "basic", params: { realm: "x" } },
      { scheme: "bearer", params: { realm: "http://127.0.0.1:1/t", error: "invalid_token" } },
    ],
  },
  {
    header: 'Bearer realm="a\\"b",service=plain',
    want: [{ scheme: "bearer", params: { realm: 'a"b', service: "plain" } }],
  },
  { header: "", want: [] },
];

for (const c of cases) {
  test(`parseChallenges ${JSON.stringify(c.header)}`, () => {
    assert.deepEqual(parseChallenges(c.header), c.want);
  });
}
