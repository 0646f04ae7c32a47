// Bytes that do not hash to the digest they were asked by are refused: a
// registry serving a corrupted layer blob (or manifest) fails the request with
// DigestMismatch naming the digest, and nothing of those bytes reaches the
// request. A reference pinned to a digest the registry does not hold is
// NotFound. The registry is real; its stored blobs are rewritten on disk.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { craneManifest, sha256Digest, tknBundlePush } from "@quarry/devcluster/registry";
import { assertFailed, literal } from "@quarry/harness/bundle-assert";
import { resolveBundle, taskYaml, useBundleScenario } from "@quarry/harness/bundle-scenario";

interface Pushed {
  manifest: string;
  layer: string;
}

const pushed: Record<string, Pushed> = {};
const bundles = useBundleScenario("bundle-digest", {
  setup: async ({ registry }) => {
    // distinct contents: blobs are shared by digest across repositories, and each test corrupts its own
    for (const repo of ["team/corrupt-layer", "team/corrupt-manifest"]) {
      const ref = registry.ref(`${repo}:v1`);
      const { digest } = await tknBundlePush(ref, [taskYaml("build", `echo ${repo}`)]);
      const { manifest } = await craneManifest(ref);
      const layers = manifest.layers as { digest: string }[];
      pushed[repo] = { manifest: digest, layer: layers[0]!.digest };
    }
  },
});

test("a corrupted layer blob: DigestMismatch naming the digest, no data", async () => {
  const { scn, registry } = bundles();
  const { layer } = pushed["team/corrupt-layer"]!;
  registry.corruptBlob(layer);
  registry.clearLog();
  const rr = await resolveBundle(scn, "corrupt-layer", {
    bundle: registry.ref("team/corrupt-layer:v1"),
    name: "build",
  });
  assertFailed(
    rr,
    "DigestMismatch",
    new RegExp(`blob ${literal(layer)} arrived as \\d+ bytes hashing to sha256:`),
  );
  // the registry did hand the corrupted bytes over: they were read, checked and refused
  assert.equal(registry.blobGets(layer).length, 1);
  assert.equal(rr.status?.refSource, undefined);
  assert.deepEqual(
    Object.keys(rr.status?.annotations ?? {}).filter((k) => k.startsWith("resolution.tekton.dev/dev.")),
    [],
  );
});

test("a corrupted manifest (still valid JSON): DigestMismatch, the layer is never fetched", async () => {
  const { scn, registry } = bundles();
  const { manifest, layer } = pushed["team/corrupt-manifest"]!;
  // same length, still a manifest the registry will parse and serve: only the hash gives it away
  const stored = readFileSync(registry.blobPath(manifest)).toString("utf8");
  const forged = stored.replace('"dev.tekton.image.name":"build"', '"dev.tekton.image.name":"bui1d"');
  assert.notEqual(forged, stored, "the manifest holds the name annotation to forge");
  registry.corruptBlob(manifest, Buffer.from(forged));
  registry.clearLog();
  const rr = await resolveBundle(scn, "corrupt-manifest", {
    bundle: registry.ref("team/corrupt-manifest:v1"),
    name: "build",
  });
  assertFailed(
    rr,
    "DigestMismatch",
    new RegExp(`manifest ${literal(manifest)} hashes to sha256:[0-9a-f]{64}, not`),
  );
  assert.deepEqual(registry.blobGets(layer), []);
});

test("a reference pinned to a digest the registry does not hold: NotFound naming it", async () => {
  const { scn, registry } = bundles();
  const missing = sha256Digest(Buffer.from("never pushed"));
  const rr = await resolveBundle(scn, "missing-digest", {
    bundle: `${registry.host}/team/corrupt-layer@${missing}`,
    name: "build",
  });
  assertFailed(
    rr,
    "NotFound",
    new RegExp(`team/corrupt-layer: manifests ${literal(missing)}: not found \\(404\\)`),
  );
});
