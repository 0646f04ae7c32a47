import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "@quarry/kube";
import { configKeyWarnings } from "@quarry/resolver-sdk";
import { httpConfigKeys, parseHttpConfig } from "./config.ts";
import { HttpResolver } from "./resolver.ts";

const resolver = () => new HttpResolver({ readPassword: async () => ({ problem: "unused" }) });

test("defaults: Tekton's 1m fetch-timeout (a set resolution-timeout first), no bindings, no insecure hosts", () => {
  const c = parseHttpConfig({});
  assert.equal(c.fetchTimeoutMs, undefined);
  assert.deepEqual(c.credentialBindings, []);
  assert.deepEqual(c.insecureHosts, []);
  assert.equal(resolver().timeout({}, {}), 60_000);
  assert.equal(resolver().timeout({}, { "resolution-timeout": "5s" }), 5_000);
  assert.equal(resolver().timeout({}, { "resolution-timeout": " " }), 60_000);
});

test("every key is declared: Tekton's shipped ConfigMap passes, a typo is reported", () => {
  const quarry = {
    "credential-bindings": "",
    "insecure-hosts": "",
    "ca-bundle": "",
    proxy: "",
    "no-proxy": "",
    "blocked-networks": "",
    "resolution-timeout": "30s",
  };
  assert.deepEqual(configKeyWarnings({ "fetch-timeout": "1m", ...quarry }, "http", httpConfigKeys), []);
  assert.deepEqual(
    configKeyWarnings({ "fetch-timout": "1m" }, "http", httpConfigKeys).map((w) => [w.key, w.reason]),
    [["fetch-timout", "UnknownConfigKey"]],
  );
});

test("Tekton's fetch-timeout is the per-attempt deadline (Go durations, 1m as Tekton ships it)", () => {
  assert.equal(parseHttpConfig({ "fetch-timeout": "1m" }).fetchTimeoutMs, 60_000);
  assert.equal(parseHttpConfig({ "fetch-timeout": "700ms" }).fetchTimeoutMs, 700);
  assert.equal(resolver().timeout({}, { "fetch-timeout": "2s", "resolution-timeout": "5s" }), 2_000);
});

test("credential-bindings, insecure-hosts and the egress keys are parsed", () => {
  const c = parseHttpConfig({
    "credential-bindings": "- {namespace: team-a, secret: web-creds, urls: ['https://files\\.example/.*']}",
    "insecure-hosts": "127.0.0.1:8080",
    "blocked-networks": "default, private",
    "no-proxy": "internal.example",
  });
  assert.equal(c.credentialBindings.length, 1);
  assert.deepEqual(c.insecureHosts, [{ hostname: "127.0.0.1", port: 8080 }]);
  assert.equal(c.egress.noProxy, "internal.example");
});

test("a bad value fails the load with a ConfigError naming the key", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ "fetch-timeout": "soon" }, /^fetch-timeout: /],
    [{ "credential-bindings": "a: b" }, /^credential-bindings: must be a YAML list/],
    [{ "insecure-hosts": "http://x/" }, /^insecure-hosts: /],
    [{ "blocked-networks": "10.0.0.0/8" }, /^blocked-networks: .*add "default"/],
    [{ "ca-bundle": "not a certificate" }, /^ca-bundle: /],
  ];
  for (const [config, want] of cases) {
    assert.throws(
      () => resolver().validateConfig(config),
      (e) => e instanceof ConfigError && want.test(e.message),
      JSON.stringify(config),
    );
  }
});
