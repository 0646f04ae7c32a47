import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { importCycles, importGraph, PRODUCT_ROOTS, relativeImports } from "./import-graph.ts";

const REPO = join(import.meta.dirname, "..");

test("relativeImports: static, type-only, re-exports and dynamic imports; packages and non-ts ignored", () => {
  const src = [
    'import { a } from "./a.ts";',
    'import type { B } from "../b/b.ts";',
    'export { c } from "./c.ts";',
    'const d = await import("./d.ts");',
    'import "./side-effect.ts";',
    'import { e } from "@quarry/kube";',
    'import data from "./data.json";',
  ].join("\n");
  assert.deepEqual(relativeImports("/r/x/y.ts", src), [
    "/r/x/a.ts",
    "/r/b/b.ts",
    "/r/x/c.ts",
    "/r/x/d.ts",
    "/r/x/side-effect.ts",
  ]);
});

test("importCycles: finds each loop once, whatever file it is entered from", () => {
  const graph = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a", "d"]],
    ["d", []],
    ["e", ["e"]],
    ["f", ["d"]],
  ]);
  assert.deepEqual(importCycles(graph), [
    ["a", "b", "c", "a"],
    ["e", "e"],
  ]);
  assert.deepEqual(
    importCycles(
      new Map([
        ["x", ["y"]],
        ["y", []],
      ]),
    ),
    [],
  );
});

test("no two files of the product import each other round a loop", () => {
  const cycles = importCycles(importGraph(REPO, PRODUCT_ROOTS));
  assert.deepEqual(
    cycles.map((c) => c.join(" -> ")),
    [],
    "break each loop by moving what both sides need into a file of its own",
  );
});
