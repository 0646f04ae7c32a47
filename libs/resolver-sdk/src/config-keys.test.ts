import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "@quarry/kube";
import { parseResolverConfig } from "./config.ts";
import { type ConfigKeys, configKeyWarnings, RUNTIME_CONFIG_KEYS } from "./config-keys.ts";

const keys: ConfigKeys = {
  known: ["default-kind", /[a-z0-9-]+\.fetch-timeout/, /[a-z]+\.(?:name|namespace)/],
  tektonOnly: ["backoff-steps", /[a-z0-9-]+\.git-token/],
};

test("configKeyWarnings: keys in, one warning per key nobody reads out, sorted", () => {
  const rows: [string, Record<string, string>, [string, string][]][] = [
    ["nothing set", {}, []],
    ["the resolver's and the runtime's keys", { "default-kind": "task", "cache-ttl": "1m" }, []],
    ["a pattern matches a whole key", { "team-a.fetch-timeout": "1m" }, []],
    [
      "a pattern does not match part of a key",
      { "x.fetch-timeout-typo": "1m" },
      [["x.fetch-timeout-typo", "UnknownConfigKey"]],
    ],
    ["an alternation's longer branch", { "x.namespace": "a", "x.name": "b" }, []],
    ["a typo", { "default-knd": "task" }, [["default-knd", "UnknownConfigKey"]]],
    ["a Tekton key not implemented", { "backoff-steps": "3" }, [["backoff-steps", "UnsupportedConfigKey"]]],
    ["a Tekton key by pattern", { "team-a.git-token": "x" }, [["team-a.git-token", "UnsupportedConfigKey"]]],
    [
      "several, sorted by key",
      { zeta: "", "backoff-steps": "3", alpha: "1" },
      [
        ["alpha", "UnknownConfigKey"],
        ["backoff-steps", "UnsupportedConfigKey"],
        ["zeta", "UnknownConfigKey"],
      ],
    ],
  ];
  for (const [what, data, want] of rows) {
    const got = configKeyWarnings(data, "bundles", keys).map((w) => [w.key, w.reason]);
    assert.deepEqual(got, want, what);
  }
});

test("configKeyWarnings: the messages name the key and the resolver", () => {
  const [unknown, unsupported] = configKeyWarnings(
    { "allowed-namespace": "a", "backoff-steps": "3" },
    "cluster",
    keys,
  );
  assert.equal(
    unknown?.message,
    'key "allowed-namespace" is not read by the cluster resolver (a typo, or another resolver\'s key?); it has no effect',
  );
  assert.equal(
    unsupported?.message,
    "key \"backoff-steps\" is read by Tekton's cluster resolver but not implemented by Quarry's; it has no effect",
  );
});

test("configKeyWarnings: without a declaration nothing is reported", () => {
  assert.deepEqual(configKeyWarnings({ anything: "x" }, "git", undefined), []);
});

test("RUNTIME_CONFIG_KEYS are the keys the runtime reads", () => {
  // every runtime key but allowed-kinds (any list) refuses a malformed value, naming itself
  for (const key of RUNTIME_CONFIG_KEYS.filter((k) => k !== "allowed-kinds")) {
    assert.throws(
      () => parseResolverConfig({ [key]: "not-a-value" }, {}),
      (e) => e instanceof ConfigError && e.key === key,
      key,
    );
  }
  assert.deepEqual(parseResolverConfig({ "allowed-kinds": "Task" }, {}).runtime.allowedKinds, ["Task"]);
});
