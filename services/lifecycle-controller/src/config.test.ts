import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultLifecycleConfig, parseLifecycleConfig } from "./config.ts";

test("parseLifecycleConfig reads the timeout and defaults the rest", () => {
  assert.deepEqual(parseLifecycleConfig({}, defaultLifecycleConfig), { maxResolutionTimeoutMs: 60_000 });
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
