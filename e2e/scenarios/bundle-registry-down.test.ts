// An unreachable registry is a transient failure: the runtime retries it with
// backoff, so a registry that comes back before the attempts run out still
// serves the request, and one that stays down ends in SourceUnavailable with
// the connection error in the message. Nothing is remembered from the outage:
// once the registry is back, new requests resolve.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { waitUntil } from "@quarry/devcluster/wait";
import { assertFailed, literal } from "@quarry/harness/bundle-assert";
import { BUNDLE_LABELS, resolveBundle, TASK_YAML, useBundleScenario } from "@quarry/harness/bundle-scenario";
import {
  createRequest,
  dataOf,
  finished,
  getRequest,
  newRequest,
  resolvedOk,
  setConfig,
  waitForRequest,
} from "@quarry/harness/scenario";
import yaml from "js-yaml";

const bundles = useBundleScenario("bundle-down", {
  // two attempts (0 s, then ~0.5 s of backoff) keep the give-up case short
  config: { "max-attempts": "2" },
  setup: async ({ registry }) => {
    await tknBundlePush(registry.ref("team/task:v1"), [TASK_YAML]);
  },
});

const params = () => ({ bundle: bundles().registry.ref("team/task:v1"), name: "build" });

test("down for good: SourceUnavailable after the attempts, naming the connection error; up: resolves", async () => {
  const { scn, registry } = bundles();
  await registry.stop();
  try {
    const rr = await resolveBundle(scn, "stays-down", params());
    assertFailed(
      rr,
      "SourceUnavailable",
      new RegExp(
        `^bundles resolver gave up after 2 attempts; attempt 2 failed: ${literal(registry.host)}: ECONNREFUSED`,
      ),
    );
  } finally {
    await registry.start();
  }
  const after = await resolveBundle(scn, "back-up", params());
  assert.ok(resolvedOk(after), JSON.stringify(after.status));
  assert.deepEqual(yaml.load(dataOf(after)), yaml.load(TASK_YAML));
});

test("down, back within the default attempts: the request created during the outage resolves", async () => {
  const { scn, registry, resolver } = bundles();
  // back to the default five attempts (0.5 + 1 + 2 + 4 s of backoff); wait until the resolver has it
  const logged = resolver.logs().length;
  await setConfig(scn, "bundleresolver-config", {});
  await waitUntil("the resolver to load the default config", () =>
    /config loaded.*"maxAttempts":5|"maxAttempts":5.*config loaded/.test(resolver.logs().slice(logged)),
  );
  await registry.stop();
  try {
    await createRequest(scn.admin, newRequest(scn.namespace, "comes-back", BUNDLE_LABELS, params()));
    await sleep(1_000);
    const during = await getRequest(scn.admin, scn.namespace, "comes-back");
    assert.ok(!finished(during), `finished while the registry was down: ${JSON.stringify(during.status)}`);
  } finally {
    await registry.start();
  }
  const rr = await waitForRequest(scn, "comes-back", finished);
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status));
  assert.deepEqual(yaml.load(dataOf(rr)), yaml.load(TASK_YAML));
  // it was tried (and failed) while the registry was down, not just picked up afterwards
  assert.match(resolver.logs().slice(logged), /comes-back.*resolution failed, will retry/);
});
