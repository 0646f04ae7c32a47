import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTable } from "./table.ts";

test("pads every column but the last by three spaces past its widest cell", () => {
  const out = formatTable(
    ["NAME", "SUCCEEDED", "REASON", "AGE"],
    [
      ["git-task", "True", "", "5s"],
      ["a-much-longer-name", "False", "ResolutionTimedOut", "3m12s"],
    ],
  );
  assert.equal(
    out,
    [
      "NAME                 SUCCEEDED   REASON               AGE",
      "git-task             True                             5s",
      "a-much-longer-name   False       ResolutionTimedOut   3m12s",
      "",
    ].join("\n"),
  );
});

test("narrow columns still take kubectl's minimum width of 6", () => {
  assert.equal(formatTable(["A", "B"], [["x", "y"]]), "A     B\nx     y\n");
});

test("indents, folds newlines in cells, and trims trailing blanks", () => {
  const out = formatTable(["TYPE", "MESSAGE"], [["Warning", "line one\n  line two"], ["Normal"]], {
    indent: "  ",
  });
  assert.equal(out, "  TYPE      MESSAGE\n  Warning   line one line two\n  Normal\n");
});

test("counts code points, not UTF-16 units", () => {
  assert.equal(formatTable(["µs", "X"], [["1", "2"]]), "µs    X\n1     2\n");
});
