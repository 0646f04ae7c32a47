// A bundle behind an OCI image index (built by `crane index append`): an
// index of one image, or with a linux/amd64 image among others, is followed
// to that image, and refSource keeps the index digest that was asked for; an
// index with several images and none for linux/amd64 is InvalidBundle.
import assert from "node:assert/strict";
import { test } from "node:test";
import { crane, craneDigest, type Registry, tektonLayer } from "@quarry/devcluster/registry";
import { assertFailed } from "@quarry/harness/bundle-assert";
import {
  PIPELINE_YAML,
  pushLayout,
  resolveBundle,
  TASK_YAML,
  taskYaml,
  useBundleScenario,
} from "@quarry/harness/bundle-scenario";
import { dataOf, resolvedOk, succeeded } from "@quarry/harness/scenario";

/** Pushes one bundle image whose config names a platform (what `crane index append` reads). */
function pushImage(registry: Registry, tag: string, arch: string, yaml: string, kind: string, name: string) {
  return pushLayout(registry.ref(`multi/b:${tag}`), {
    layers: [tektonLayer({ kind, name, content: yaml })],
    config: { content: JSON.stringify({ architecture: arch, os: "linux" }) },
  });
}

async function pushIndex(registry: Registry, tag: string, images: string[]): Promise<string> {
  const target = registry.ref(`multi/b:${tag}`);
  const args = ["index", "append", "-t", target];
  for (const image of images) args.push("-m", registry.ref(`multi/b:${image}`));
  await crane(args, target);
  return craneDigest(target);
}

const indexes: Record<string, string> = {};
const bundles = useBundleScenario("bundle-index", {
  setup: async ({ registry }) => {
    await pushImage(registry, "amd64", "amd64", TASK_YAML, "task", "build");
    await pushImage(registry, "arm64", "arm64", PIPELINE_YAML, "pipeline", "ci");
    await pushImage(registry, "s390x", "s390x", taskYaml("zbuild"), "task", "zbuild");
    indexes.single = await pushIndex(registry, "single", ["arm64"]);
    indexes.multi = await pushIndex(registry, "multi", ["arm64", "amd64"]);
    indexes.noAmd64 = await pushIndex(registry, "no-amd64", ["arm64", "s390x"]);
  },
});

test("an index of one image is followed to it", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "single", {
    bundle: registry.ref("multi/b:single"),
    name: "ci",
    kind: "pipeline",
  });
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
  assert.match(dataOf(rr), /Pipeline/);
  assert.equal(rr.status?.refSource?.digest?.sha256, indexes.single?.slice("sha256:".length));
});

test("an index with several images: the linux/amd64 one", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "multi", {
    bundle: `${registry.host}/multi/b@${indexes.multi}`,
    name: "build",
  });
  assert.ok(resolvedOk(rr), succeeded(rr)?.message);
  assert.match(dataOf(rr), /echo build/);
  assert.equal(rr.status?.refSource?.digest?.sha256, indexes.multi?.slice("sha256:".length));
});

test("several images and none for linux/amd64: InvalidBundle", async () => {
  const { scn, registry } = bundles();
  const rr = await resolveBundle(scn, "no-amd64", {
    bundle: registry.ref("multi/b:no-amd64"),
    name: "zbuild",
  });
  assertFailed(rr, "InvalidBundle", /image index of 2 images with none for linux\/amd64/);
});
