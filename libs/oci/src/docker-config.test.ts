import assert from "node:assert/strict";
import { test } from "node:test";
import { DockerConfigError, DockerCredentials } from "./docker-config.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const ref = (registry: string, repository: string) => ({ registry, repository });

test("auth field and username/password both read; Docker Hub aliases match", () => {
  const creds = new DockerCredentials();
  creds.add(
    JSON.stringify({
      auths: {
        "https://index.docker.io/v1/": { auth: b64("hub:pw:with:colons") },
        "127.0.0.1:5000": { username: "u", password: "p" },
      },
    }),
    "Secret a/b",
  );
  assert.deepEqual(creds.lookup(ref("docker.io", "library/alpine")), {
    username: "hub",
    password: "pw:with:colons",
  });
  assert.deepEqual(creds.lookup(ref("127.0.0.1:5000", "ns/b")), { username: "u", password: "p" });
  assert.equal(creds.lookup(ref("127.0.0.1:5001", "ns/b")), undefined);
});

test("legacy dockercfg (no auths wrapper)", () => {
  const creds = new DockerCredentials();
  creds.add(JSON.stringify({ "reg.example": { auth: b64("x:y") } }), "s");
  assert.deepEqual(creds.lookup(ref("reg.example", "a")), { username: "x", password: "y" });
});

test("the most specific path prefix wins, whatever the order; wildcards lose to exact hosts", () => {
  const creds = new DockerCredentials();
  creds.add(JSON.stringify({ auths: { "*.example.com": { auth: b64("wild:1") } } }), "s1");
  creds.add(
    JSON.stringify({
      auths: { "r.example.com": { auth: b64("host:2") }, "r.example.com/team": { auth: b64("team:3") } },
    }),
    "s2",
  );
  assert.equal(creds.lookup(ref("r.example.com", "team/x"))?.username, "team");
  assert.equal(creds.lookup(ref("r.example.com", "teamx/y"))?.username, "host");
  assert.equal(creds.lookup(ref("q.example.com", "a"))?.username, "wild");
  assert.equal(creds.lookup(ref("a.b.example.com", "a")), undefined);
});

test("first document wins between equally specific entries", () => {
  const creds = new DockerCredentials();
  creds.add(JSON.stringify({ auths: { "r.io": { auth: b64("first:1") } } }), "s1");
  creds.add(JSON.stringify({ auths: { "r.io": { auth: b64("second:2") } } }), "s2");
  assert.equal(creds.lookup(ref("r.io", "a"))?.username, "first");
});

test("broken documents name the source, never the content", () => {
  const creds = new DockerCredentials();
  assert.throws(
    () => creds.add("{not json", "Secret ns/pull"),
    (e: unknown) => e instanceof DockerConfigError && /Secret ns\/pull/.test(e.message),
  );
  assert.throws(
    () => creds.add(JSON.stringify({ auths: { "r.io": { auth: b64("nocolon-secret") } } }), "Secret ns/pull"),
    (e: unknown) => e instanceof DockerConfigError && !e.message.includes("nocolon-secret"),
  );
});
