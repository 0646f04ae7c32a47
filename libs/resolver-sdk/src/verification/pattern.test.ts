import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePattern, MAX_PATTERN_LENGTH, normalizeSource } from "./pattern.ts";

const CATALOG = "https://github.com/tektoncd/catalog.git";

test("a pattern matches the whole normalized source, never a prefix, suffix or substring", async () => {
  const rows: [pattern: string, uri: string, matches: boolean][] = [
    ["https://github\\.com/tektoncd/catalog\\.git", `git+${CATALOG}`, true],
    ["https://github\\.com/tektoncd/catalog\\.git", `  git+${CATALOG}\n`, true],
    // the prefix-only and substring matches GHSA-rmx9-2pp3-xhcr exploited
    ["https://github\\.com/tektoncd/catalog\\.git", `git+${CATALOG}.evil.example/x.git`, false],
    ["https://github\\.com/tektoncd/catalog\\.git", `git+https://evil.example/?u=${CATALOG}`, false],
    ["github\\.com/tektoncd", `git+${CATALOG}`, false],
    ["https://github.com/tektoncd/.*", `git+${CATALOG}`, true],
    // Tekton's docs' `tektoncd/*` means "tektoncd" then slashes: anchored, it covers no repository
    ["https://github.com/tektoncd/*", `git+${CATALOG}`, false],
    ["^a|b$", "ab", false],
    ["registry\\.example/team/tasks", "registry.example/team/tasks", true],
    ["registry\\.example/team/tasks", "registry.example/team/tasks-evil", false],
  ];
  for (const [pattern, uri, want] of rows) {
    const c = await compilePattern(pattern);
    assert.ok(c.ok, pattern);
    assert.equal(c.pattern.matches(normalizeSource(uri)), want, `${pattern} ~ ${JSON.stringify(uri)}`);
  }
});

test("patterns that cannot be used are refused with a message; RE2 syntax only", async () => {
  const rows: [pattern: string, message: RegExp][] = [
    ["", /empty/],
    ["(", /not a regular expression: .*missing closing \)/],
    ["(?=lookahead)", /not a regular expression/],
    ["(a)\\1", /not a regular expression/],
    ["x".repeat(MAX_PATTERN_LENGTH + 1), /over 1024/],
  ];
  for (const [pattern, message] of rows) {
    const c = await compilePattern(pattern);
    assert.equal(c.ok, false, pattern.slice(0, 20));
    if (!c.ok) assert.match(c.message, message);
  }
});

test("a pattern that matches every source is flagged", async () => {
  for (const [pattern, everything] of [
    [".*", true],
    ["(?s).*", true],
    [".*|x", true],
    [".+", false],
    ["https://.*", false],
  ] as const) {
    const c = await compilePattern(pattern);
    assert.ok(c.ok);
    assert.equal(c.pattern.matchesEverything, everything, pattern);
  }
});

test("a hostile pattern runs in linear time", async () => {
  const c = await compilePattern("(a+)+$");
  assert.ok(c.ok);
  const t0 = performance.now();
  assert.equal(c.pattern.matches(`${"a".repeat(50_000)}!`), false);
  assert.ok(performance.now() - t0 < 2000, "backtracking");
});
