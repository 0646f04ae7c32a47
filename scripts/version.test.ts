// One version: the repository's VERSION file. Every chart's version and appVersion, the
// umbrella's dependency versions and the CLI package say the same; scripts/release.sh stamps
// another version into copies when it releases one.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const repo = join(import.meta.dirname, "..");
const VERSION = readFileSync(join(repo, "VERSION"), "utf8").trim();

/** Chart.yaml's version, appVersion and each dependency's version (top-level and list items). */
function chartVersions(text: string): { version?: string; appVersion?: string; dependencies: string[] } {
  const field = (name: string) => text.match(new RegExp(`^${name}:\\s*"?([^"\\s]+)"?\\s*$`, "m"))?.[1];
  const dependencies = [...text.matchAll(/^\s+version:\s*"?([^"\s]+)"?\s*$/gm)].map((m) => m[1]!);
  return { version: field("version"), appVersion: field("appVersion"), dependencies };
}

test("VERSION is a semantic version", () => {
  assert.match(VERSION, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
});

test("every chart's version and appVersion, and the umbrella's dependencies, are VERSION", () => {
  const charts = readdirSync(join(repo, "charts"), { withFileTypes: true }).filter(
    (d) => d.isDirectory() && existsSync(join(repo, "charts", d.name, "Chart.yaml")),
  );
  assert.ok(charts.length >= 9);
  for (const dir of charts) {
    const chart = chartVersions(readFileSync(join(repo, "charts", dir.name, "Chart.yaml"), "utf8"));
    assert.equal(chart.version, VERSION, `${dir.name}: version`);
    if (chart.appVersion !== undefined) assert.equal(chart.appVersion, VERSION, `${dir.name}: appVersion`);
    for (const v of chart.dependencies) assert.equal(v, VERSION, `${dir.name}: a dependency's version`);
  }
});

test("the CLI package's version is VERSION", () => {
  const pkg = JSON.parse(readFileSync(join(repo, "cli", "package.json"), "utf8")) as { version: string };
  assert.equal(pkg.version, VERSION);
});
