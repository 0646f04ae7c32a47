// allowed-repositories limits which repositories bundles may come from: a
// bundle from any other repository is Forbidden, naming the config key,
// before the registry is contacted (patterns match the whole
// "registry/repository"); the list is live config, so allowing the repository
// in the ConfigMap makes new requests for it succeed without a restart.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolutionRequest } from "@quarry/api";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { assertFailed, literal } from "@quarry/harness/bundle-assert";
import {
  reasonOf,
  resolveBundle,
  TASK_YAML,
  taskYaml,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { dataOf, resolvedOk, setConfig } from "@quarry/harness/scenario";
import yaml from "js-yaml";

const CONFIG = "bundleresolver-config";
const OTHER_TASK = taskYaml("build", "echo other");

const bundles = useBundleScenario("bundle-allow", {
  setup: async ({ scn, registry }) => {
    await tknBundlePush(registry.ref("team/allowed:v1"), [TASK_YAML]);
    await tknBundlePush(registry.ref("team/other:v1"), [OTHER_TASK]);
    // the registry's port is only known now, so the list is written here rather than as `config`
    await setConfig(scn, CONFIG, { "allowed-repositories": `${literal(registry.host)}/team/allowed` });
  },
});

test("the allowed repository resolves", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "allowed", { bundle: registry.ref("team/allowed:v1"), name: "build" });
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status));
  assert.deepEqual(yaml.load(dataOf(rr)), yaml.load(TASK_YAML));
});

test("another repository, or one that merely starts with the allowed name: Forbidden, registry untouched", async () => {
  const { scn, registry } = bundles();
  registry.clearLog();
  const [other, prefixed] = await Promise.all([
    resolveBundle(scn, "other", { bundle: registry.ref("team/other:v1"), name: "build" }),
    resolveBundle(scn, "prefixed", { bundle: registry.ref("team/allowed-not:v1"), name: "build" }),
  ]);
  for (const [rr, repo] of [
    [other, "team/other"],
    [prefixed, "team/allowed-not"],
  ] as const) {
    assertFailed(
      rr,
      "Forbidden",
      new RegExp(
        `repository ${literal(registry.host)}/${repo} is not in the bundle resolver's allowed-repositories`,
      ),
    );
  }
  assert.deepEqual(registry.accessLog(), [], "the allow-list is checked before any registry call");
});

test("allowing the repository in the live ConfigMap: new requests for it resolve", async () => {
  const { scn, registry } = bundles();
  const host = literal(registry.host);
  await setConfig(scn, CONFIG, {
    "allowed-repositories": `# both teams' repositories\n${host}/team/allowed\n${host}/team/other\n`,
  });
  // the resolver picks the ConfigMap up through its informer: retry with new requests until it has
  const deadline = Date.now() + 15_000;
  let rr: ResolutionRequest;
  for (let i = 0; ; i++) {
    rr = await resolveBundle(scn, `after-reload-${i}`, {
      bundle: registry.ref("team/other:v1"),
      name: "build",
    });
    if (resolvedOk(rr)) break;
    assert.equal(reasonOf(rr), "Forbidden", JSON.stringify(rr.status));
    assert.ok(Date.now() < deadline, "the new allowed-repositories never applied");
    await sleep(200);
  }
  assert.deepEqual(yaml.load(dataOf(rr)), yaml.load(OTHER_TASK));
  // the first repository is still allowed under the new list
  const still = await resolveBundle(scn, "still-allowed", {
    bundle: registry.ref("team/allowed:v1"),
    name: "build",
  });
  assert.ok(resolvedOk(still), JSON.stringify(still.status));
});
