import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { duBytes } from "./object-cache.ts";

test("duBytes sums every file below a directory (concurrent stats lose nothing)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-du-"));
  try {
    mkdirSync(join(dir, "objects", "pack"), { recursive: true });
    const sizes = [10, 200, 3000, 40_000];
    for (const [i, n] of sizes.entries()) {
      writeFileSync(join(dir, i % 2 ? "objects/pack" : ".", `f${i}`), Buffer.alloc(n));
    }
    assert.equal(
      await duBytes(dir),
      sizes.reduce((a, b) => a + b, 0),
    );
    assert.equal(await duBytes(join(dir, "missing")), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
