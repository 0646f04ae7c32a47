import assert from "node:assert/strict";
import { test } from "node:test";
import { type RealmBinding, realmBinding, type TokenRealmPair } from "./realm-binding.ts";

const PAIRS: TokenRealmPair[] = [
  { registry: "registry.corp.example:5000", realm: "sso.other.example" },
  { registry: "127.0.0.2:5000", realm: "127.0.0.3:6000" },
  { registry: "docker.io", realm: "login.example.com:8443" },
];

// registry (as in the reference), its scheme, the realm URL → the binding, or undefined (anonymous)
const CASES: [string, "http" | "https", string, RealmBinding | undefined][] = [
  // the registry's own host and port
  ["ghcr.io", "https", "https://ghcr.io/token", "same-host"],
  ["ghcr.io", "https", "https://GHCR.io:443/token", "same-host"],
  ["ghcr.io", "https", "https://ghcr.io./token", "same-host"],
  ["127.0.0.2:5000", "http", "http://127.0.0.2:5000/token", "same-host"],
  ["reg.local", "http", "http://reg.local:80/token", "same-host"],
  ["ghcr.io", "https", "https://ghcr.io:8443/token", undefined],
  ["127.0.0.2:5000", "http", "http://127.0.0.2:5001/token", undefined],
  ["reg.local", "http", "https://reg.local/token", undefined],
  // Docker Hub: the API host is registry-1.docker.io, the realm auth.docker.io
  ["docker.io", "https", "https://auth.docker.io/token", "parent-domain"],
  ["docker.io", "https", "https://registry-1.docker.io/token", "same-host"],
  ["docker.io", "https", "https://docker.io.evil.example/token", undefined],
  // under the registry's parent domain (registry host minus its first label)
  ["registry.gitlab.com", "https", "https://gitlab.com/jwt/auth", "parent-domain"],
  ["registry.corp.example", "https", "https://auth.corp.example/token", "parent-domain"],
  ["registry.corp.example:5000", "https", "https://a.b.corp.example:9443/token", "parent-domain"],
  ["registry.corp.example", "https", "https://corp.example.evil/token", undefined],
  ["registry.corp.example", "https", "https://evilcorp.example/token", undefined],
  ["registry.corp.example", "https", "https://example/token", undefined],
  // a parent of one label is a TLD: no sibling is bound
  ["ghcr.io", "https", "https://evil.io/token", undefined],
  ["reg.example", "https", "https://auth.example/token", undefined],
  ["localhost:5000", "http", "http://localhost:6000/token", undefined],
  // IP literals have no parent domain, and a literal realm is never under one
  ["10.0.0.5:5000", "http", "http://10.0.0.6:5000/token", undefined],
  ["127.0.0.2:5000", "http", "http://127.0.0.3:5000/token", undefined],
  ["[::1]:5000", "http", "http://[::2]:5000/token", undefined],
  ["registry.corp.example", "https", "https://10.0.0.1/token", undefined],
  // operator pairs (token-realm-hosts): exact registry, realm host and port
  ["registry.corp.example:5000", "https", "https://sso.other.example/token", "token-realm-hosts"],
  ["registry.corp.example:5000", "https", "https://sso.other.example:8443/token", undefined],
  ["registry.corp.example", "https", "https://sso.other.example/token", undefined],
  ["127.0.0.2:5000", "http", "http://127.0.0.3:6000/token", "token-realm-hosts"],
  ["127.0.0.2:5000", "http", "http://127.0.0.3:6001/token", undefined],
  ["127.0.0.2:5001", "http", "http://127.0.0.3:6000/token", undefined],
  ["docker.io", "https", "https://login.example.com:8443/oauth", "token-realm-hosts"],
  ["docker.io", "https", "https://login.example.com/oauth", undefined],
];

for (const [registry, registryScheme, realm, want] of CASES) {
  test(`${registry} (${registryScheme}) → ${realm}: ${want ?? "withheld"}`, () => {
    assert.equal(realmBinding({ registry, registryScheme, realm: new URL(realm), pairs: PAIRS }), want);
  });
}

test("a pair written for Docker Hub's API host binds docker.io references too", () => {
  const pairs = [{ registry: "registry-1.docker.io", realm: "login.example.com" }];
  const realm = new URL("https://login.example.com/t");
  assert.equal(
    realmBinding({ registry: "docker.io", registryScheme: "https", realm, pairs }),
    "token-realm-hosts",
  );
});
