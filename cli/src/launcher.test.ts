// bin/quarry is the command users type: it must run the CLI from a shell whose
// own node is older than 22 (Node 20 here), finding the project's Node itself.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

test("bin/quarry runs the CLI from a shell without Node >= 22 on PATH", () => {
  // a new login shell's PATH: the system's node (if any), not the one the tests run on
  const env = { HOME: process.env.HOME ?? "/root", PATH: "/usr/local/bin:/usr/bin:/bin" };
  const out = execFileSync(join(root, "bin", "quarry"), ["help"], { env, encoding: "utf8" });
  assert.match(out, /^quarry: /);
  assert.match(out, /quarry resolve TYPE KEY=VALUE/);
  assert.match(out, /scripts\/demo\.sh/, "the help says where the demo is");
});
