// The README's "What is here" tables are the map a newcomer starts from: every
// path they name exists, and every package and top-level folder is on them.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { workspacePackages } from "./package-boundaries.ts";

const REPO = join(import.meta.dirname, "..");

/** The first column's paths of every table in the README's "What is here" section. */
export function whatIsHerePaths(readme: string): string[] {
  const start = readme.indexOf("## What is here");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1] ?? "");
}

test("whatIsHerePaths reads the first column of the section's tables only", () => {
  const md =
    "# x\n| `a` | b |\n## What is here\n| path | what |\n| --- | --- |\n| `libs/api` | x |\n\n| `dev/demo` | y |\n## Next\n| `z` | w |\n";
  assert.deepEqual(whatIsHerePaths(md), ["libs/api", "dev/demo"]);
});

test("the README's 'What is here' matches the tree", () => {
  const listed = whatIsHerePaths(readFileSync(join(REPO, "README.md"), "utf8"));
  assert.deepEqual(
    listed.filter((p) => !existsSync(join(REPO, p))),
    [],
    "the README names paths that do not exist",
  );
  const expected = [...workspacePackages(REPO).map((p) => p.dir), "charts", "deploy", "docs"];
  assert.deepEqual(
    expected.filter((p) => !listed.includes(p)),
    [],
    "packages or folders missing from the README's table",
  );
});
