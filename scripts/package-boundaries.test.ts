import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import {
  boundaryViolations,
  isTooling,
  packageDirOf,
  packageNameOf,
  specifiers,
} from "./package-boundaries.ts";

const REPO = join(import.meta.dirname, "..");

test("packageDirOf: one package per folder under libs, services, examples and dev; cli, e2e, bench are one each", () => {
  assert.equal(packageDirOf("libs/kube/src/informers/informer.ts"), "libs/kube");
  assert.equal(packageDirOf("services/git-resolver/src/main.ts"), "services/git-resolver");
  assert.equal(packageDirOf("dev/harness/src/scenario.ts"), "dev/harness");
  assert.equal(packageDirOf("cli/src/get.ts"), "cli");
  assert.equal(packageDirOf("e2e/scenarios/git-resolve.test.ts"), "e2e");
  assert.equal(isTooling("dev/devcluster"), true);
  assert.equal(isTooling("bench"), true);
  assert.equal(isTooling("libs/kube"), false);
  assert.equal(isTooling("cli"), false);
});

test("specifiers and packageNameOf: every import form; workspace packages by their scope", () => {
  const src = [
    'import { a } from "./a.ts";',
    'import type { K } from "@quarry/kube";',
    'export { f } from "@quarry/kube/testing";',
    'const d = await import("@quarry/devcluster/paths");',
    'import "node:fs";',
    `  'import { sample } from "../elsewhere.ts";',`,
  ].join("\n");
  assert.deepEqual(specifiers(src), [
    "./a.ts",
    "@quarry/kube",
    "@quarry/kube/testing",
    "@quarry/devcluster/paths",
    "node:fs",
  ]);
  assert.equal(packageNameOf("@quarry/kube/testing"), "@quarry/kube");
  assert.equal(packageNameOf("@kubernetes/client-node"), undefined);
  assert.equal(packageNameOf("node:fs"), undefined);
});

test("the product imports no tooling, test or benchmark, and no package reaches into another by path", () => {
  assert.deepEqual(
    boundaryViolations(REPO).map((v) => `${v.file}: ${v.imports} (${v.why})`),
    [],
  );
});
