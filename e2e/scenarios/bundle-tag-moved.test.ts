// A tag is re-resolved on every request, even in the default cache mode
// (auto): after the tag moves to other content, a new request gets the new
// digest and the new object, while a request pinned to the old digest still
// gets the old object. Pushed with the real `tkn bundle push` to a real registry.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tknBundlePush } from "@quarry/devcluster/registry";
import { resolveBundle, taskYaml, useBundleScenario } from "@quarry/harness/bundle-scenario";
import { dataOf, resolvedOk } from "@quarry/harness/scenario";
import yaml from "js-yaml";

const V1 = taskYaml("build", "echo first");
const V2 = taskYaml("build", "echo second");

const bundles = useBundleScenario("bundle-tag-moved");

test("the tag moves: a new request follows it, a pinned one keeps the old content", async () => {
  const { scn, registry } = bundles();
  const tag = registry.ref("team/moving:v1");
  const a = (await tknBundlePush(tag, [V1])).digest;

  const first = await resolveBundle(scn, "before-move", { bundle: tag, name: "build" });
  assert.ok(resolvedOk(first), JSON.stringify(first.status));
  assert.equal(first.status?.refSource?.digest?.sha256, a.slice("sha256:".length));
  assert.deepEqual(yaml.load(dataOf(first)), yaml.load(V1));

  const b = (await tknBundlePush(tag, [V2])).digest;
  assert.notEqual(b, a);
  registry.clearLog();
  // same params as the first request: only the fresh tag lookup can tell it apart
  const second = await resolveBundle(scn, "after-move", { bundle: tag, name: "build" });
  assert.ok(resolvedOk(second), JSON.stringify(second.status));
  assert.equal(second.status?.refSource?.digest?.sha256, b.slice("sha256:".length));
  assert.deepEqual(yaml.load(dataOf(second)), yaml.load(V2));
  assert.equal(second.status?.annotations?.["resolution.tekton.dev/cached"], undefined);
  assert.ok(
    registry.accessLog().some((e) => e.method === "HEAD" && e.path === "/v2/team/moving/manifests/v1"),
    "the tag was looked up again",
  );

  const pinned = await resolveBundle(scn, "pinned-old", {
    bundle: `${registry.host}/team/moving@${a}`,
    name: "build",
  });
  assert.ok(resolvedOk(pinned), JSON.stringify(pinned.status));
  assert.equal(pinned.status?.refSource?.digest?.sha256, a.slice("sha256:".length));
  assert.deepEqual(yaml.load(dataOf(pinned)), yaml.load(V1));
});
