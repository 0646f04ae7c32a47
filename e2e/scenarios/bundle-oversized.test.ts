// Size limits end in TooLarge, each checked as early as it can be:
// max-layer-size (here 1.5 MiB, under the 2 MiB default, so the configured
// value is what applies) refuses a layer on its descriptor size before the
// registry is asked for the blob, and stops decompression of a small gzip
// layer that expands past it; an object within the layer limit but over the
// 1 MiB limit for resolved data is refused before anything is written.
import assert from "node:assert/strict";
import { test } from "node:test";
import { craneManifest, tektonLayer } from "@quarry/devcluster/registry";
import { assertFailed, literal } from "@quarry/harness/bundle-assert";
import { pushLayout, resolveBundle, taskYaml, useBundleScenario } from "@quarry/harness/bundle-scenario";
import { dataOf, resolvedOk } from "@quarry/harness/scenario";
import yaml from "js-yaml";

const KiB = 1024;
const MiB = 1024 * KiB;
const MAX_LAYER = 1536 * KiB;

/** A Task whose script pads it to about `bytes`. */
const paddedTask = (name: string, bytes: number) => taskYaml(name, `echo ${"x".repeat(bytes)}`);

const layers = {
  small: tektonLayer({ kind: "task", name: "small", content: taskYaml("small") }),
  // uncompressed, so the blob itself (and its descriptor size) is over the limit
  big: tektonLayer({ kind: "task", name: "big", content: paddedTask("big", 1600 * KiB), gzip: false }),
  // a few KiB of gzip that would expand to 8 MiB
  bomb: tektonLayer({ kind: "task", name: "bomb", content: paddedTask("bomb", 8 * MiB) }),
  // under max-layer-size once decompressed, over what a ResolutionRequest may carry
  huge: tektonLayer({ kind: "task", name: "huge", content: paddedTask("huge", 1200 * KiB) }),
};

const digests: Record<string, string> = {};
const bundles = useBundleScenario("bundle-oversized", {
  config: { "max-layer-size": "1536Ki" },
  setup: async ({ registry }) => {
    const ref = registry.ref("team/sizes:v1");
    await pushLayout(ref, { layers: Object.values(layers) });
    const { manifest } = await craneManifest(ref);
    const pushed = manifest.layers as { digest: string; size: number; annotations: Record<string, string> }[];
    for (const l of pushed) digests[l.annotations["dev.tekton.image.name"]!] = l.digest;
    const size = (name: string) => pushed.find((l) => l.digest === digests[name])!.size;
    // the shapes the tests rely on
    assert.ok(size("big") > MAX_LAYER, `big is ${size("big")} bytes`);
    assert.ok(size("bomb") < 64 * KiB, `bomb is ${size("bomb")} bytes`);
    assert.ok(size("huge") < MAX_LAYER, `huge is ${size("huge")} bytes`);
  },
});

const request = (name: string) => {
  const { scn, registry } = bundles();
  return resolveBundle(scn, `sized-${name}`, { bundle: registry.ref("team/sizes:v1"), name });
};

test("a small layer of the same bundle resolves under the limit", async () => {
  const rr = await request("small");
  assert.ok(resolvedOk(rr), JSON.stringify(rr.status));
  assert.deepEqual(yaml.load(dataOf(rr)), yaml.load(taskYaml("small")));
});

test("a layer blob over max-layer-size: TooLarge from its descriptor, the blob never fetched", async () => {
  const { registry } = bundles();
  registry.clearLog();
  const rr = await request("big");
  assertFailed(
    rr,
    "TooLarge",
    new RegExp(`layer ${literal(digests.big!)} is \\d+ bytes, over the ${MAX_LAYER}-byte max-layer-size`),
  );
  // the registry was reached (the tag is resolved on every request), only the blob was not asked for
  assert.ok(
    registry.accessLog().some((e) => e.method === "HEAD" && e.path === "/v2/team/sizes/manifests/v1"),
  );
  assert.deepEqual(
    registry.accessLog().filter((e) => e.path.endsWith(`/blobs/${digests.big}`)),
    [],
  );
});

test("a small gzip layer expanding past max-layer-size: TooLarge", async () => {
  const { registry } = bundles();
  registry.clearLog();
  const rr = await request("bomb");
  assertFailed(
    rr,
    "TooLarge",
    new RegExp(`task "bomb" of .*: layer expands to more than ${MAX_LAYER} bytes`),
  );
  // unlike the big blob, this one had to be fetched to learn what it expands to
  assert.equal(registry.blobGets(digests.bomb!).length, 1);
});

test("an object under max-layer-size but over 1 MiB: TooLarge for resolved data", async () => {
  const rr = await request("huge");
  assertFailed(
    rr,
    "TooLarge",
    /resolved bundles resource is \d+ bytes, over the 1 MiB limit for resolved data/,
  );
});
