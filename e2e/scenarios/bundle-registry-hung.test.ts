// A registry that accepts connections and never answers (its process
// frozen) does not hang a request: each attempt is cut at fetch-timeout, the
// request fails SourceUnavailable after the configured attempts, and the
// resolver stays healthy and serves again once the registry answers.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { assertFailed } from "@quarry/harness/bundle-assert";
import { resolveBundle, TASK_YAML, useBundleScenario } from "@quarry/harness/bundle-scenario";
import { resolvedOk, succeeded } from "@quarry/harness/scenario";

const bundles = useBundleScenario("bundle-hung", {
  config: { "fetch-timeout": "1s", "max-attempts": "2" },
  setup: async ({ registry }) => {
    await tknBundlePush(registry.ref("team/task:v1"), [TASK_YAML]);
  },
});

test("a frozen registry: each attempt times out, then SourceUnavailable; the resolver stays ready", async () => {
  const { scn, registry, resolver } = bundles();
  registry.freeze();
  try {
    const started = Date.now();
    const rr = await resolveBundle(scn, "hung", { bundle: registry.ref("team/task:v1"), name: "build" });
    assertFailed(rr, "SourceUnavailable", /gave up after 2 attempts; attempt 2 timed out after 1s/);
    assert.ok(Date.now() - started < 15_000, "bounded by the attempts, not by the registry");
    const ready = await resolver.ops("/readyz");
    assert.equal(ready.status, 200, "the resolver is still ready while the registry hangs");
  } finally {
    registry.thaw();
  }
  const again = await resolveBundle(scn, "thawed", { bundle: registry.ref("team/task:v1"), name: "build" });
  assert.ok(resolvedOk(again), succeeded(again)?.message);
});
