// A registry that says "too many requests, come back in 3 s" (429 with
// Retry-After from its token service) is retried no sooner than that: the
// client does not sleep, the resolver runtime requeues the request for at
// least the Retry-After instead of its 0.5 s backoff, and it then resolves.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_USER, tknBundlePush } from "@quarry/devcluster/registry";
import { BUNDLE_LABELS, TASK_YAML, useBundleScenario } from "@quarry/harness/bundle-scenario";
import { createRequest, newRequest, resolvedOk, succeeded, waitForRequest } from "@quarry/harness/scenario";

const RETRY_AFTER_S = 3;
const bundles = useBundleScenario("bundle-retry-after", {
  registry: { auth: "token", anonymousPull: true },
  setup: async ({ registry }) => {
    await tknBundlePush(registry.ref("public/task:v1"), [TASK_YAML], DEFAULT_USER);
  },
});

test("429 with Retry-After: one refused attempt, the next after the Retry-After, then resolved", async () => {
  const { scn, registry } = bundles();
  const token = registry.token;
  assert.ok(token);
  token.clear();
  token.setFailure(429, RETRY_AFTER_S);
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "throttled", BUNDLE_LABELS, {
      bundle: registry.ref("public/task:v1"),
      name: "build",
    }),
  );
  // the first attempt reaches the token service and is refused
  while (!token.requests().some((r) => r.status === 429)) await sleep(50);
  const refusedAt = token.requests().find((r) => r.status === 429)?.at ?? 0;
  await sleep(1_500); // the SDK's own backoff would have retried twice by now (0.5 s, 1 s)
  assert.equal(token.requests().length, 1, "no retry before the Retry-After");
  token.setFailure(undefined);
  const rr = await waitForRequest(scn, "throttled", resolvedOk, 20_000);
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
  const granted = token.requests().find((r) => r.status === 200);
  assert.ok(granted);
  assert.ok(
    granted.at - refusedAt >= RETRY_AFTER_S * 1000 - 100,
    `retried ${granted.at - refusedAt} ms after the 429, Retry-After was ${RETRY_AFTER_S} s`,
  );
});
