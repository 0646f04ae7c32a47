import assert from "node:assert/strict";
import { test } from "node:test";
import { formatDuration, parseDuration } from "./duration.ts";

test("parseDuration reads Go durations", () => {
  const cases: [string, number][] = [
    ["1m", 60_000],
    ["90s", 90_000],
    ["1m30s", 90_000],
    ["500ms", 500],
    ["1.5s", 1500],
    ["2h", 7_200_000],
    [" 10s ", 10_000],
    ["0", 0],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test("parseDuration rejects malformed input", () => {
  for (const bad of ["", "ten seconds", "10", "-1s", "1x", "1m 30s", "s"]) {
    assert.throws(() => parseDuration(bad), /invalid duration/, bad);
  }
});

test("formatDuration matches Go's String()", () => {
  const cases: [number, string][] = [
    [60_000, "1m0s"],
    [30_000, "30s"],
    [3_600_000, "1h0m0s"],
    [90_000, "1m30s"],
    [1500, "1.5s"],
    [250, "250ms"],
    [0, "0s"],
  ];
  for (const [ms, text] of cases) assert.equal(formatDuration(ms), text);
});
