// Tekton's backoff keys in bundleresolver-config space a request's attempts:
// a registry whose token service answers 503 three times, then grants, is
// tried at 0 s, 1 s, 3 s and 7 s (backoff-duration 1s, factor 2, no jitter),
// not at the SDK's own 0.5 s, 1 s, 2 s; and backoff-steps caps the attempts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_USER, tknBundlePush } from "@quarry/devcluster/registry";
import { assertScheduleGaps, BACKOFF_SCHEDULE } from "@quarry/harness/backoff";
import { BUNDLE_LABELS, TASK_YAML, useBundleScenario } from "@quarry/harness/bundle-scenario";
import {
  createRequest,
  finished,
  newRequest,
  resolvedOk,
  setConfig,
  succeeded,
  waitForRequest,
} from "@quarry/harness/scenario";

const bundles = useBundleScenario("bundles-backoff", {
  registry: { auth: "token", anonymousPull: true },
  config: { ...BACKOFF_SCHEDULE, "backoff-steps": "4" },
  setup: async ({ registry }) => {
    await tknBundlePush(registry.ref("public/task:v1"), [TASK_YAML], DEFAULT_USER);
    // its own repository: a token granted for the first test's is cached for that scope
    await tknBundlePush(registry.ref("public/other:v1"), [TASK_YAML], DEFAULT_USER);
  },
});

test("three refused attempts spaced 1 s, 2 s, 4 s apart, then the fourth resolves", async () => {
  const { scn, registry } = bundles();
  const token = registry.token;
  assert.ok(token);
  token.clear();
  token.setFailure(503);
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "flaky", BUNDLE_LABELS, {
      bundle: registry.ref("public/task:v1"),
      name: "build",
    }),
  );
  // each attempt asks the token service once: let three be refused, then grant the fourth
  while (token.requests().filter((r) => r.status === 503).length < 3) await sleep(20);
  token.setFailure(undefined);
  const rr = await waitForRequest(scn, "flaky", resolvedOk, 30_000);
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
  const at = token.requests().map((r) => r.at);
  assert.equal(at.length, 4, `token requests: ${JSON.stringify(token.requests())}`);
  assertScheduleGaps(at);
});

test("backoff-steps is the number of attempts: two, then SourceUnavailable", async () => {
  const { scn, registry } = bundles();
  await setConfig(scn, "bundleresolver-config", { ...BACKOFF_SCHEDULE, "backoff-steps": "2" });
  const token = registry.token;
  assert.ok(token);
  token.clear();
  token.setFailure(503);
  // the config is live: give the resolver's watch a moment to see the change
  await sleep(1_000);
  await createRequest(
    scn.admin,
    newRequest(scn.namespace, "down", BUNDLE_LABELS, {
      bundle: registry.ref("public/other:v1"),
      name: "build",
    }),
  );
  const rr = await waitForRequest(scn, "down", finished, 30_000);
  token.setFailure(undefined);
  assert.equal(rr.status?.annotations?.["quarry.dev/reason"], "SourceUnavailable");
  assert.match(succeeded(rr)?.message ?? "", /gave up after 2 attempts/);
  assert.equal(token.requests().filter((r) => r.status === 503).length, 2);
});
