import assert from "node:assert/strict";
import { test } from "node:test";
import { ageSince, formatAge } from "./age.ts";

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

test("formatAge follows kubectl's HumanDuration thresholds", () => {
  const cases: [number, string][] = [
    [-5 * s, "<invalid>"],
    [-1 * s, "0s"],
    [-500, "0s"],
    [0, "0s"],
    [999, "0s"],
    [5 * s, "5s"],
    [119 * s, "119s"],
    [120 * s, "2m"],
    [3 * m + 12 * s, "3m12s"],
    [9 * m + 59 * s, "9m59s"],
    [10 * m + 30 * s, "10m"],
    [179 * m, "179m"],
    [3 * h, "3h"],
    [5 * h + 30 * m, "5h30m"],
    [8 * h + 30 * m, "8h"],
    [47 * h, "47h"],
    [2 * d, "2d"],
    [2 * d + 3 * h, "2d3h"],
    [8 * d + 3 * h, "8d"],
    [729 * d, "729d"],
    [730 * d, "2y"],
    [365 * 3 * d + 20 * d, "3y20d"],
    [365 * 9 * d, "9y"],
  ];
  for (const [ms, want] of cases) assert.equal(formatAge(ms), want, `${ms} ms`);
});

test("ageSince reads RFC 3339 and says <unknown> for a missing time", () => {
  const now = Date.parse("2025-01-01T00:01:00Z");
  assert.equal(ageSince("2025-01-01T00:00:00Z", now), "60s");
  assert.equal(ageSince(undefined, now), "<unknown>");
  assert.equal(ageSince("yesterday", now), "<unknown>");
});
