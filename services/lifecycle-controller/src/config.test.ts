import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultLifecycleConfig, parseLifecycleConfig } from "./config.ts";

test("parseLifecycleConfig reads the timeout and defaults the rest", () => {
  assert.deepEqual(parseLifecycleConfig({}, defaultLifecycleConfig), {
    maxResolutionTimeoutMs: 60_000,
    completedRequestTtlMs: 3_600_000,
  });
  assert.equal(
    parseLifecycleConfig({ "default-maximum-resolution-timeout": "90s" }, defaultLifecycleConfig)
      .maxResolutionTimeoutMs,
    90_000,
  );
  assert.equal(
    parseLifecycleConfig({ "default-maximum-resolution-timeout": " " }, defaultLifecycleConfig)
      .maxResolutionTimeoutMs,
    60_000,
  );
});

test("parseLifecycleConfig rejects malformed and non-positive values naming the key", () => {
  for (const bad of ["ten minutes", "0", "0s", "10"]) {
    assert.throws(
      () => parseLifecycleConfig({ "default-maximum-resolution-timeout": bad }, defaultLifecycleConfig),
      /default-maximum-resolution-timeout/,
      bad,
    );
  }
});

test("completed-request-ttl: a duration, 0 for never; negative or malformed refused naming the key", () => {
  const ttl = (v: string) =>
    parseLifecycleConfig({ "completed-request-ttl": v }, defaultLifecycleConfig).completedRequestTtlMs;
  assert.equal(ttl("10m"), 600_000);
  assert.equal(ttl("0"), 0);
  assert.equal(ttl("0s"), 0);
  assert.equal(ttl(""), 3_600_000);
  for (const bad of ["-1m", "soon", "10"]) assert.throws(() => ttl(bad), /completed-request-ttl/, bad);
});
