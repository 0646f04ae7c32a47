import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { writeLayoutFiles } from "@quarry/image-builder/oci-layout";
import { relabelLayout } from "./relabel.ts";

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const blob = (dir: string, digest: string) => readFileSync(join(dir, "blobs", ...digest.split(":")));

test("new labels: a new config and manifest, every digest true to its bytes, the layer untouched", () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-relabel-"));
  try {
    const layer = Buffer.from("layer bytes");
    writeLayoutFiles(dir, {
      layer,
      layerMediaType: "application/vnd.oci.image.layer.v1.tar",
      diffId: sha(layer),
      config: { User: "65532:65532", Labels: { "org.opencontainers.image.version": "0.1.0", keep: "me" } },
      createdBy: "test",
      name: "quarry.local/x:local",
    });
    const before = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")).manifests[0];
    const digest = relabelLayout(dir, { "org.opencontainers.image.version": "0.2.0" });
    const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"));
    assert.equal(index.manifests.length, 1);
    const desc = index.manifests[0];
    assert.equal(desc.digest, digest);
    assert.notEqual(digest, before.digest);
    // the index entry keeps its platform and annotations (containerd's image name)
    assert.deepEqual(desc.annotations, before.annotations);
    const manifestBytes = blob(dir, digest);
    assert.equal(sha(manifestBytes), digest);
    assert.equal(desc.size, manifestBytes.length);
    const manifest = JSON.parse(manifestBytes.toString());
    const configBytes = blob(dir, manifest.config.digest);
    assert.equal(sha(configBytes), manifest.config.digest);
    assert.equal(manifest.config.size, configBytes.length);
    const config = JSON.parse(configBytes.toString());
    assert.deepEqual(config.config.Labels, { "org.opencontainers.image.version": "0.2.0", keep: "me" });
    assert.equal(config.config.User, "65532:65532");
    assert.deepEqual(manifest.layers, JSON.parse(blob(dir, before.digest).toString()).layers);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
