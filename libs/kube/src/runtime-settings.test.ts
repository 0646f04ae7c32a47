import assert from "node:assert/strict";
import { test } from "node:test";
import { settingsFromEnv } from "./runtime.ts";

test("QUARRY_WATCH_WATCHDOG sets the informers' watchdog; unset or 0 keeps their default", () => {
  assert.equal(settingsFromEnv({ QUARRY_WATCH_WATCHDOG: "90s" }).watchdogMs, 90_000);
  assert.equal(settingsFromEnv({ QUARRY_WATCH_WATCHDOG: "1m30s" }).watchdogMs, 90_000);
  assert.equal(settingsFromEnv({}).watchdogMs, undefined);
  assert.equal(settingsFromEnv({ QUARRY_WATCH_WATCHDOG: "0" }).watchdogMs, undefined);
  assert.throws(() => settingsFromEnv({ QUARRY_WATCH_WATCHDOG: "soon" }), /invalid duration/);
});
