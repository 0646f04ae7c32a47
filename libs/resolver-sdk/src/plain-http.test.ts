import assert from "node:assert/strict";
import { test } from "node:test";
import { mayCarryCredential, parseInsecureHosts } from "./plain-http.ts";

test("parseInsecureHosts: hosts and host:port, comma or newline, normalised like URLs", () => {
  assert.deepEqual(parseInsecureHosts(undefined), []);
  assert.deepEqual(parseInsecureHosts("git.lab, 127.0.0.1:8080\n# comment\n[::1]:3000\nGIT.Example\n[::1]"), [
    { hostname: "git.lab", port: undefined },
    { hostname: "127.0.0.1", port: 8080 },
    { hostname: "[::1]", port: 3000 },
    { hostname: "git.example", port: undefined },
    { hostname: "[::1]", port: undefined },
  ]);
  for (const bad of [
    "http://git.lab",
    "git.lab/x",
    "user@git.lab",
    "git.lab:0",
    "git.lab:70000",
    "git.lab:x",
    "::1",
  ]) {
    assert.throws(
      () => parseInsecureHosts(bad),
      (err: Error) => err.name === "ConfigError" && /insecure-hosts/.test(err.message),
      bad,
    );
  }
});

test("mayCarryCredential: https always; http only to a listed host (and port when listed)", () => {
  const hosts = parseInsecureHosts("git.lab, 127.0.0.1:8080, [::1]");
  const cases: [string, boolean][] = [
    ["https://github.com/org/x.git", true],
    ["https://anything.example:8443/x", true],
    ["http://github.com/org/x.git", false],
    ["http://git.lab/x.git", true],
    ["http://git.lab:9999/x.git", true],
    ["http://GIT.LAB/x.git", true],
    ["http://git.lab.evil.io/x.git", false],
    ["http://127.0.0.1:8080/x.git", true],
    ["http://127.0.0.1:8081/x.git", false],
    ["http://127.0.0.1/x.git", false],
    ["http://[::1]:5000/x.git", true],
  ];
  for (const [url, want] of cases) assert.equal(mayCarryCredential(url, hosts), want, url);
  assert.equal(mayCarryCredential("http://h/x", parseInsecureHosts("h:80")), true, "the default port");
  assert.equal(mayCarryCredential("http://h:81/x", parseInsecureHosts("h:80")), false);
  assert.equal(mayCarryCredential("http://h/x", []), false, "none listed by default");
});
