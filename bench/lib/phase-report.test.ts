import assert from "node:assert/strict";
import { test } from "node:test";
import { markdownTable } from "./phase-report.ts";
import { bucketQuantile, promBuckets, promSum } from "./prom.ts";
import { machineRows } from "./report.ts";
import { calls, median, ms, percentile, summarize, table, versus } from "./stats.ts";

test("markdownTable: header, separator, one line per row", () => {
  assert.equal(
    markdownTable(
      ["a", "b"],
      [
        [1, "x"],
        ["", 2],
      ],
    ),
    "| a | b |\n| --- | --- |\n| 1 | x |\n|  | 2 |",
  );
});

test("table: keys padded to the longest", () => {
  assert.equal(
    table([
      ["a", "1"],
      ["long", "2"],
    ]),
    "  a     1\n  long  2",
  );
});

test("ms, calls, versus: a summary, counts and a difference on one line", () => {
  const s = summarize([1, 2, 3, 4]);
  assert.equal(ms(s), "p50 2  p90 4  p99 4  max 4  (n=4)");
  assert.equal(calls({ "POST 201": 3, "GET 200": 1 }), "POST 201: 3, GET 200: 1");
  assert.equal(calls({}), "none");
  assert.deepEqual(versus({ p50: 10, p90: 20, p99: 30, max: 40 }, { p50: 1, p90: 2, p99: 3, max: 4 }), {
    p50: 9,
    p90: 18,
    p99: 27,
    max: 36,
  });
});

test("percentile and median", () => {
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90), 9);
  assert.ok(Number.isNaN(percentile([], 50)));
  assert.equal(median([3, 1, 2, 4]), 2.5);
  assert.equal(median([Number.NaN, 5]), 5);
});

test("machineRows: the machine and the control plane's versions", () => {
  const rows = machineRows(
    { cpus: 2, cpuModel: "X", memGiB: 4, node: "v24", kubeApiserver: "k", etcd: "e" },
    ", git 2",
  );
  assert.deepEqual(rows, [
    ["machine", "2 × X, 4 GiB, Node v24, git 2"],
    ["control plane", "k, e"],
  ]);
});

test("promSum, promBuckets, bucketQuantile: samples by labels, a histogram's quantile between two readings", () => {
  const text = [
    "# HELP x_total x",
    'x_total{a="1",b="2"} 3',
    'x_total{a="2"} 4',
    "x_total_other 100",
    "x_total 5",
    'h_bucket{le="1"} 2',
    'h_bucket{le="2"} 6',
    'h_bucket{le="+Inf"} 6',
  ].join("\n");
  assert.equal(promSum(text, "x_total"), 12);
  assert.equal(promSum(text, "x_total", { a: "1" }), 3);
  assert.equal(promSum(text, "missing"), 0);
  const after = promBuckets(text, "h");
  assert.deepEqual(
    [...after],
    [
      [1, 2],
      [2, 6],
      [Number.POSITIVE_INFINITY, 6],
    ],
  );
  assert.equal(bucketQuantile(new Map(), after, 0.5), 1.25);
});
