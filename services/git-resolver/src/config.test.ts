import assert from "node:assert/strict";
import { test } from "node:test";
import { parseSize } from "@quarry/kube";
import { configKeyWarnings } from "@quarry/resolver-sdk";
import { defaultGitConfig, gitConfigKeys, parseGitConfig, settingsFor } from "./config.ts";

test("empty config gives the defaults", () => {
  const c = parseGitConfig({});
  assert.deepEqual(c.base, defaultGitConfig.base);
  assert.equal(c.maxCacheBytes, 2 * 1024 ** 3);
  assert.equal(c.refLookupIntervalMs, 500);
  assert.deepEqual(c.allowedUrls, []);
  assert.equal(c.namespaceUrls, undefined);
  assert.deepEqual(c.credentialBindings, [], "no token is bound by config");
  assert.deepEqual(c.insecureHosts, [], "no plain-http host may get a token");
  assert.equal(c.backoff, undefined, "no backoff key: the runtime's retries");
});

test("credential-bindings and insecure-hosts", () => {
  const c = parseGitConfig({
    "credential-bindings": "- {namespace: '*', secret: github-token, urls: ['https://github\\.com/org/.*']}",
    "insecure-hosts": "git.lab, 127.0.0.2:8080",
  });
  assert.equal(c.credentialBindings.length, 1);
  assert.equal(c.credentialBindings[0]?.secret, "github-token");
  assert.deepEqual(c.insecureHosts, [
    { hostname: "git.lab", port: undefined },
    { hostname: "127.0.0.2", port: 8080 },
  ]);
});

test("Tekton's keys, Quarry's keys, and the runtime's keys left alone", () => {
  const c = parseGitConfig({
    "fetch-timeout": "1m30s",
    "default-url": "https://github.com/tektoncd/catalog.git",
    "default-revision": "v1",
    proxy: "http://proxy.internal:3128",
    "no-proxy": "git.internal,.corp",
    "git-token-username": "x-token-auth",
    "allowed-urls": "https://github\\.com/tektoncd/.*\n# comment\n\nhttps://git\\.internal/.*",
    "allowed-revisions": "main\nv[0-9.]+\n[0-9a-f]{40}",
    "namespace-allowed-urls":
      "team-a: https://git\\.internal/team-a/.*\n'*': [https://github\\.com/tektoncd/.*]\n",
    "max-repository-size": "100Mi",
    "max-cache-size": "1Gi",
    "ref-lookup-interval": "250ms",
    "resolution-timeout": "20s",
    "default-cache-mode": "always",
    "default-org": "tektoncd",
    "scm-type": "github",
  });
  assert.equal(c.base.fetchTimeoutMs, 90_000);
  assert.equal(c.base.defaultUrl, "https://github.com/tektoncd/catalog.git");
  assert.equal(c.base.defaultRevision, "v1");
  assert.equal(c.base.proxy, "http://proxy.internal:3128");
  assert.equal(c.base.noProxy, "git.internal,.corp");
  assert.equal(c.base.tokenUsername, "x-token-auth");
  assert.equal(c.allowedUrls.length, 2);
  assert.equal(c.allowedUrls[0]!.test("https://github.com/tektoncd/catalog.git"), true);
  assert.equal(c.allowedUrls[0]!.test("https://github.com/tektoncd/catalog.git.evil.com/x"), true);
  assert.equal(c.allowedUrls[0]!.test("https://evil.com/https://github.com/tektoncd/x"), false, "anchored");
  assert.equal(c.allowedRevisions.length, 3);
  assert.deepEqual([...c.namespaceUrls!.keys()], ["team-a", "*"]);
  assert.equal(c.maxRepositoryBytes, 100 * 1024 ** 2);
  assert.equal(c.maxCacheBytes, 1024 ** 3);
  assert.equal(c.refLookupIntervalMs, 250);
  assert.equal(parseGitConfig({ "ref-lookup-interval": "0" }).refLookupIntervalMs, 0, "0: back to back");
});

test("configKey overrides (Tekton's <configKey>.<key>)", () => {
  const c = parseGitConfig({
    "default-url": "https://a.example/x.git",
    "internal.default-url": "https://git.internal/tasks.git",
    "internal.fetch-timeout": "10s",
    "internal.server-url": "https://git.internal",
  });
  assert.equal(settingsFor(c, undefined)!.defaultUrl, "https://a.example/x.git");
  assert.equal(settingsFor(c, "default")!.defaultUrl, "https://a.example/x.git");
  const internal = settingsFor(c, "internal")!;
  assert.equal(internal.defaultUrl, "https://git.internal/tasks.git");
  assert.equal(internal.fetchTimeoutMs, 10_000);
  assert.equal(internal.defaultRevision, "main");
  assert.equal(settingsFor(c, "nope"), undefined);
});

test("bad values throw ConfigError naming the key", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ "fetch-timeout": "soon" }, /^fetch-timeout: invalid duration/],
    [{ "fetch-timeout": "0s" }, /^fetch-timeout: must be positive/],
    [{ "team.fetch-timeout": "x" }, /^team\.fetch-timeout: invalid duration/],
    [{ proxy: "socks5://p:1080" }, /^proxy: must be an http\(s\) URL/],
    [{ proxy: "not a url" }, /^proxy: must be an http\(s\) URL/],
    [{ "git-token-username": "a:b" }, /^git-token-username: must not contain ":"/],
    [
      { "allowed-urls": "https://(unclosed" },
      /^allowed-urls: invalid regular expression "https:\/\/\(unclosed"/,
    ],
    [{ "allowed-revisions": "[" }, /^allowed-revisions: invalid regular expression/],
    [{ "namespace-allowed-urls": "- a\n- b" }, /^namespace-allowed-urls: must be a YAML mapping/],
    [{ "namespace-allowed-urls": "a: {b: c}" }, /^namespace-allowed-urls: namespace "a": expected a pattern/],
    [{ "namespace-allowed-urls": "a: [" }, /^namespace-allowed-urls: not YAML/],
    [{ "max-repository-size": "lots" }, /^max-repository-size: must be a size like 512Mi/],
    [{ "max-cache-size": "-1Gi" }, /^max-cache-size: must be a size/],
    [{ "ref-lookup-interval": "often" }, /^ref-lookup-interval: invalid duration/],
    [{ "ref-lookup-interval": "2m" }, /^ref-lookup-interval: must be at most 1m/],
    [{ "team.allowed-urls": ".*" }, /^team\.allowed-urls: allowed-urls cannot be set per configKey/],
    [{ "a.b.fetch-timeout": "1s" }, /^a\.b\.fetch-timeout: expected <configKey>\.<key> with a single dot/],
    [{ "credential-bindings": "a: b" }, /^credential-bindings: must be a YAML list/],
    [{ "insecure-hosts": "http://git.lab" }, /^insecure-hosts: "http:\/\/git\.lab": not a host/],
    [
      { "team.insecure-hosts": "git.lab" },
      /^team\.insecure-hosts: insecure-hosts cannot be set per configKey/,
    ],
    [{ "team.credential-bindings": "[]" }, /^team\.credential-bindings: credential-bindings cannot be set/],
    [{ "backoff-duration": "soon" }, /^backoff-duration: must be a duration/],
    [{ "backoff-duration": "-1s" }, /^backoff-duration: must not be negative/],
    [{ "backoff-factor": "two" }, /^backoff-factor: must be a number/],
    [{ "backoff-jitter": "-0.1" }, /^backoff-jitter: must not be negative/],
    [{ "backoff-steps": "0" }, /^backoff-steps: must be at least 1/],
    [{ "backoff-steps": "2.5" }, /^backoff-steps: must be an integer/],
    [{ "backoff-cap": "10" }, /^backoff-cap: must be a duration/],
    [{ "team.backoff-steps": "3" }, /^team\.backoff-steps: Tekton's backoff keys apply to every configKey/],
  ];
  for (const [data, want] of cases) {
    assert.throws(
      () => parseGitConfig(data),
      (err: Error) => err.name === "ConfigError" && want.test(err.message),
      JSON.stringify(data),
    );
  }
});

test("parseSize", () => {
  const cases: [string, number | undefined][] = [
    ["0", 0],
    ["1048576", 1048576],
    ["512Mi", 512 * 1024 ** 2],
    ["2Gi", 2 * 1024 ** 3],
    ["1.5Gi", 1.5 * 1024 ** 3],
    ["500M", 500e6],
    ["10k", 10_000],
    ["1GB", undefined],
    ["", undefined],
    ["-1", undefined],
  ];
  for (const [input, want] of cases) assert.equal(parseSize(input), want, input);
});

test("backoff-* and git-token: read globally; git-token (Tekton parses it, never uses it) accepted", () => {
  const c = parseGitConfig({
    "backoff-steps": "4",
    "backoff-cap": "30s",
    "git-token": "x",
    "team.git-token": "y",
  });
  assert.equal(c.backoff?.steps, 4);
  assert.equal(c.backoff?.capMs, 30_000);
  assert.equal(c.backoff?.durationMs, 2000, "Tekton's default for an unset key");
  assert.equal(c.byConfigKey.has("team"), false, "git-token sets nothing");
});

test("configKeys: the keys nobody reads are reported, Tekton's unused git-token as such", () => {
  const rows: [string, Record<string, string>, [string, string][]][] = [
    [
      "Tekton v1.15's shipped ConfigMap, backoff keys uncommented",
      {
        "fetch-timeout": "1m",
        "default-url": "https://github.com/tektoncd/catalog.git",
        "default-revision": "main",
        "scm-type": "github",
        "server-url": "",
        "api-token-secret-name": "",
        "api-token-secret-key": "",
        "api-token-secret-namespace": "default",
        "default-org": "",
        "default-cache-mode": "auto",
        "backoff-duration": "2s",
        "backoff-factor": "2.0",
        "backoff-jitter": "0.1",
        "backoff-steps": "2",
        "backoff-cap": "10s",
      },
      [],
    ],
    [
      "Quarry's keys and the egress keys",
      {
        proxy: "",
        "no-proxy": "",
        "ca-bundle": "",
        "blocked-networks": "default",
        "git-token-username": "git",
        "allowed-urls": "",
        "allowed-revisions": "",
        "namespace-allowed-urls": "",
        "max-repository-size": "1Gi",
        "max-cache-size": "2Gi",
        "ref-lookup-interval": "1s",
        "credential-bindings": "[]",
        "insecure-hosts": "",
        "resolution-timeout": "1m",
      },
      [],
    ],
    [
      "<configKey>.<key> for each key a configKey may set",
      {
        "team.fetch-timeout": "1m",
        "team.default-url": "https://a/b",
        "team.default-revision": "v1",
        "team.scm-type": "gitea",
        "team.server-url": "https://g",
        "team.api-token-secret-name": "s",
        "team.api-token-secret-key": "k",
        "team.api-token-secret-namespace": "n",
        "team.default-org": "o",
        "team.proxy": "",
        "team.no-proxy": "",
        "team.ca-bundle": "",
        "team.git-token-username": "u",
      },
      [],
    ],
    [
      "git-token, plain and per configKey",
      { "git-token": "x", "team.git-token": "y" },
      [
        ["git-token", "UnsupportedConfigKey"],
        ["team.git-token", "UnsupportedConfigKey"],
      ],
    ],
    [
      "typos and other resolvers' keys",
      { "fetch-timout": "1m", "default-kind": "task", "team.default-urls": "x" },
      [
        ["default-kind", "UnknownConfigKey"],
        ["fetch-timout", "UnknownConfigKey"],
        ["team.default-urls", "UnknownConfigKey"],
      ],
    ],
  ];
  for (const [what, data, want] of rows) {
    const got = configKeyWarnings(data, "git", gitConfigKeys).map((w) => [w.key, w.reason]);
    assert.deepEqual(got, want, what);
  }
});
