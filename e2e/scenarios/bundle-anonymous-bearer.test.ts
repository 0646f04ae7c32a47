// A public repository behind token auth (Docker Hub's shape): the registry
// answers 401 with a Bearer challenge even for anonymous pulls, and the
// resolver fetches an anonymous token from the realm and pulls with it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_USER, tknBundlePush } from "@quarry/devcluster/registry";
import { resolveBundle, TASK_YAML, useBundleScenario } from "@quarry/harness/bundle-scenario";
import { resolvedOk, succeeded } from "@quarry/harness/scenario";

const bundles = useBundleScenario("bundle-anon", {
  registry: { auth: "token", anonymousPull: true },
  setup: async ({ registry }) => {
    await tknBundlePush(registry.ref("public/task:v1"), [TASK_YAML], DEFAULT_USER);
  },
});

test("no credentials anywhere: an anonymous token pulls the bundle", async () => {
  const { scn, registry } = bundles();
  registry.token?.clear();
  const rr = await resolveBundle(scn, "anon", { bundle: registry.ref("public/task:v1"), name: "build" });
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
  const requests = registry.token?.requests() ?? [];
  assert.ok(requests.length >= 1);
  assert.ok(
    requests.every((r) => r.user === undefined),
    "no credentials were sent",
  );
  assert.deepEqual(requests[0]?.granted, ["repository:public/task:pull"]);
});
