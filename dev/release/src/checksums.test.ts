import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CHECKSUMS_FILE, checksums } from "./checksums.ts";

test("SHA256SUMS that sha256sum -c accepts, nested files included, itself left out", () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-sums-"));
  try {
    mkdirSync(join(dir, "sbom"));
    writeFileSync(join(dir, "release.yaml"), "kind: List\n");
    writeFileSync(join(dir, "sbom", "git-resolver.cdx.json"), "{}\n");
    writeFileSync(join(dir, CHECKSUMS_FILE), "stale");
    const sums = checksums(dir);
    assert.deepEqual(
      sums
        .trim()
        .split("\n")
        .map((l) => l.split("  ")[1]),
      ["release.yaml", "sbom/git-resolver.cdx.json"],
    );
    writeFileSync(join(dir, CHECKSUMS_FILE), sums);
    execFileSync("sha256sum", ["-c", "--quiet", CHECKSUMS_FILE], { cwd: dir });
    writeFileSync(join(dir, "release.yaml"), "kind: Changed\n");
    assert.throws(() =>
      execFileSync("sha256sum", ["-c", "--quiet", CHECKSUMS_FILE], { cwd: dir, stdio: "pipe" }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
