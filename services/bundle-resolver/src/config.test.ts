import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "@quarry/kube";
import { configKeyWarnings } from "@quarry/resolver-sdk";
import { bundleConfigKeys, defaultBundleConfig, KEYS, parseBundleConfig } from "./config.ts";

test("empty config gives the defaults", () => {
  assert.deepEqual(parseBundleConfig({}), defaultBundleConfig);
});

test("Tekton's keys and Quarry's keys", () => {
  const c = parseBundleConfig({
    "default-kind": "pipeline",
    "default-service-account": "puller",
    "fetch-timeout": "45s",
    "allowed-repositories": "# team bundles\n127\\.0\\.0\\.1:\\d+/team/.*\n\ngcr.io/tekton-releases/.*",
    "insecure-registries": "reg.local:5000, Other.Local",
    "max-layer-size": "512Ki",
    "blob-cache-size": "16Mi",
    "resolution-timeout": "1m",
  });
  assert.equal(c.defaultKind, "pipeline");
  assert.equal(c.defaultServiceAccount, "puller");
  assert.equal(c.fetchTimeoutMs, 45_000);
  assert.equal(c.allowedRepositories.length, 2);
  assert.ok(c.allowedRepositories[0]?.test("127.0.0.1:5000/team/x"));
  assert.ok(!c.allowedRepositories[0]?.test("127.0.0.1:5000/other/x"));
  assert.deepEqual([...c.insecureRegistries], ["reg.local:5000", "other.local"]);
  assert.equal(c.maxLayerBytes, 512 * 1024);
  assert.equal(c.blobCacheBytes, 16 * 1024 ** 2);
});

test("token-realm-hosts: registry=realm pairs, comma or newline separated, lower-cased", () => {
  const c = parseBundleConfig({
    "token-realm-hosts":
      "# corp\nRegistry.Corp.Example:5000 = SSO.corp.example:8443, docker.io=login.example\n[::1]:5000=127.0.0.3",
  });
  assert.deepEqual(c.tokenRealmHosts, [
    { registry: "registry.corp.example:5000", realm: "sso.corp.example:8443" },
    { registry: "docker.io", realm: "login.example" },
    { registry: "[::1]:5000", realm: "127.0.0.3" },
  ]);
});

const bad: [Record<string, string>, string][] = [
  [{ "default-kind": "Task" }, "default-kind"],
  [{ "default-service-account": "a b" }, "default-service-account"],
  [{ "fetch-timeout": "soon" }, "fetch-timeout"],
  [{ "fetch-timeout": "0s" }, "fetch-timeout"],
  [{ "allowed-repositories": "(" }, "allowed-repositories"],
  [{ "max-layer-size": "big" }, "max-layer-size"],
  [{ "blob-cache-size": "0" }, "blob-cache-size"],
  [{ "token-realm-hosts": "sso.corp.example" }, "token-realm-hosts"],
  [{ "token-realm-hosts": "reg.corp=https://sso.corp" }, "token-realm-hosts"],
  [{ "token-realm-hosts": "reg.corp=sso.corp/token" }, "token-realm-hosts"],
  [{ "token-realm-hosts": "reg.corp=*.corp" }, "token-realm-hosts"],
  [{ "token-realm-hosts": "reg.corp=a=b" }, "token-realm-hosts"],
  [{ "token-realm-hosts": "=sso.corp" }, "token-realm-hosts"],
  [{ "token-realm-hosts": "reg.corp=sso.corp:99999" }, "token-realm-hosts"],
];
for (const [data, key] of bad) {
  test(`bad ${key} throws ConfigError naming it`, () => {
    assert.throws(
      () => parseBundleConfig(data),
      (e: unknown) => e instanceof ConfigError && e.message.includes(key),
    );
  });
}

test("every key is declared: Tekton's shipped keys and its backoff keys pass", () => {
  const tektonShipped = {
    "default-service-account": "default",
    "default-kind": "task",
    "default-cache-mode": "auto",
  };
  const quarry = Object.fromEntries(
    [...Object.values(KEYS), "ca-bundle", "proxy", "no-proxy", "blocked-networks"].map((k) => [k, ""]),
  );
  assert.deepEqual(configKeyWarnings({ ...tektonShipped, ...quarry }, "bundles", bundleConfigKeys), []);
  const backoff = Object.fromEntries(
    ["duration", "factor", "jitter", "steps", "cap"].map((k) => [`backoff-${k}`, ""]),
  );
  assert.deepEqual(configKeyWarnings(backoff, "bundles", bundleConfigKeys), []);
  assert.deepEqual(
    configKeyWarnings({ "backoff-steps": "3", "default-kinds": "task" }, "bundles", bundleConfigKeys).map(
      (w) => [w.key, w.reason],
    ),
    [["default-kinds", "UnknownConfigKey"]],
  );
});

test("Tekton's backoff keys become the retry schedule; a bad one names its key", () => {
  assert.equal(parseBundleConfig({}).backoff, undefined);
  assert.deepEqual(parseBundleConfig({ "backoff-duration": "500ms", "backoff-steps": "4" }).backoff, {
    durationMs: 500,
    factor: 2,
    jitter: 0.1,
    steps: 4,
    capMs: 10_000,
  });
  assert.throws(
    () => parseBundleConfig({ "backoff-factor": "double" }),
    (e: unknown) => e instanceof ConfigError && e.key === "backoff-factor",
  );
});
