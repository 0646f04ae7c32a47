import assert from "node:assert/strict";
import { test } from "node:test";
import { initRun } from "./pipe-spans.ts";
import { columns, flagParams, valueReport } from "./value-rows.ts";

test("valueReport: values by shape, nested objects a row per field, then a markdown line", () => {
  const summary = { count: 2, mean: 1, p50: 1, p90: 2, p99: 2, max: 2 };
  const report = valueReport(
    [
      ["n", 3],
      ["series", [1, 2]],
      ["flat", { a: 1, b: undefined }],
      ["empty", {}],
      ["nested", { lat: summary, calls: { "GET 200": 4 } }],
    ],
    "x | y",
    "1 | 2",
  );
  assert.equal(
    report,
    [
      "  n        3",
      "  series   1 2",
      "  flat     a: 1",
      "  empty    none",
      "  nested   ",
      "    lat    p50 1  p90 2  p99 2  max 2  (n=2)",
      "    calls  GET 200: 4",
      "",
      "| x | y |",
      "| --- | --- |",
      "| 1 | 2 |",
    ].join("\n"),
  );
});

test("valueReport: undefined rows left out, records in a list, a markdown line per row from columns", () => {
  const md = columns<{ n: string; x?: number }>(
    [
      ["name", (r) => r.n],
      ["x", (r) => r.x],
    ],
    [{ n: "a", x: 1 }, { n: "b" }],
  );
  assert.equal(
    valueReport(
      [
        ["gone", undefined],
        ["list", [{ a: 1 }, { a: 2, b: 3 }]],
      ],
      md.header,
      md.rows,
    ),
    ["  list  a: 1; a: 2, b: 3", "", "| name | x |", "| --- | --- |", "| a | 1 |", "| b |  |"].join("\n"),
  );
});

test("flagParams: camelCased flags, renamed ones, without the standard ones", () => {
  assert.deepEqual(
    flagParams(
      { "closed-loop": true, settle: 3, json: "f", deadline: 60, help: false },
      { settle: "settleSeconds" },
    ),
    {
      closedLoop: true,
      settleSeconds: 3,
    },
  );
});

test("initRun: the init container's uptime readings on the bench's clock", () => {
  const clock = (u: number) => u * 1000 - 5;
  assert.deepEqual(initRun("10.5 12.5\n", clock), { start: 10_495, end: 12_495 });
  assert.equal(initRun("12.5 10.5", clock), undefined);
  assert.equal(initRun("", clock), undefined);
});
