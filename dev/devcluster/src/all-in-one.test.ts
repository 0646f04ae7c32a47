import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { COMPONENT_OF, componentsOf, isComponent, mergeEnv } from "./all-in-one.ts";
import { repoRoot } from "./paths.ts";

test("QUARRY_COMPONENTS lists the started services' components in the process's wiring order", () => {
  assert.equal(componentsOf(["git-resolver", "lifecycle-controller"]), "lifecycle,git");
  assert.equal(componentsOf(["pipe-resolver", "run-controller", "pipe-resolver"]), "run,pipe");
  assert.equal(componentsOf(Object.keys(COMPONENT_OF)), "lifecycle,run,cluster,git,bundle,pipe,http,hub");
});

test("every component of services/all-in-one has its service, and nothing else is one", () => {
  // the process's own list (services/all-in-one/src/components.ts), read as text: tooling does not
  // import the product's packages by path
  const src = readFileSync(join(repoRoot, "services", "all-in-one", "src", "components.ts"), "utf8");
  const listed = /export const COMPONENTS = \[([^\]]*)\]/.exec(src)?.[1];
  assert.ok(listed, "COMPONENTS in components.ts");
  assert.deepEqual(
    [...listed.matchAll(/"([a-z-]+)"/g)].map((m) => m[1]),
    Object.values(COMPONENT_OF),
  );
  assert.equal(isComponent("wait-task"), false);
  assert.equal(isComponent("resolver-template"), false);
  assert.equal(isComponent("all-in-one"), false);
});

test("one env from each member's; the same value twice is fine, two values for one variable are refused", () => {
  const env = mergeEnv(
    new Map<string, Record<string, string>>([
      ["git-resolver", { QUARRY_GIT_CACHE_DIR: "/c", LOG_LEVEL: "debug" }],
      ["hub-resolver", { ARTIFACT_HUB_API: "http://h", LOG_LEVEL: "debug" }],
    ]),
  );
  assert.deepEqual(env, { QUARRY_GIT_CACHE_DIR: "/c", LOG_LEVEL: "debug", ARTIFACT_HUB_API: "http://h" });
  assert.throws(
    () =>
      mergeEnv(
        new Map([
          ["lifecycle-controller", { OTEL_SERVICE_NAME: "a" }],
          ["cluster-resolver", { OTEL_SERVICE_NAME: "b" }],
        ]),
      ),
    /lifecycle-controller and cluster-resolver set OTEL_SERVICE_NAME differently \(a and b\)/,
  );
});
