// An image layout's config labels changed in place: a new config blob, a new manifest naming it,
// the index pointing at that manifest. The layers are untouched, so releasing the same tree under
// another version pushes the same layers and only a new config and manifest.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  [key: string]: unknown;
}

const blobPath = (dir: string, digest: string) => join(dir, "blobs", ...digest.split(":"));

function putBlob(dir: string, json: unknown): { digest: string; size: number } {
  const bytes = Buffer.from(JSON.stringify(json));
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  writeFileSync(blobPath(dir, digest), bytes);
  return { digest, size: bytes.length };
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

/** Sets `labels` on the single image of the OCI layout in `dir`; returns the new manifest digest. */
export function relabelLayout(dir: string, labels: Record<string, string>): string {
  const index = readJson<{ manifests: Descriptor[] }>(join(dir, "index.json"));
  if (index.manifests.length !== 1) throw new Error(`${dir}: ${index.manifests.length} images, expected one`);
  const manifestDesc = index.manifests[0]!;
  const manifest = readJson<{ config: Descriptor }>(blobPath(dir, manifestDesc.digest));
  const config = readJson<{ config?: { Labels?: Record<string, string> } }>(
    blobPath(dir, manifest.config.digest),
  );
  const relabelled = {
    ...config,
    config: { ...config.config, Labels: { ...config.config?.Labels, ...labels } },
  };
  const newManifest = { ...manifest, config: { ...manifest.config, ...putBlob(dir, relabelled) } };
  const written = putBlob(dir, newManifest);
  index.manifests[0] = { ...manifestDesc, ...written };
  writeFileSync(join(dir, "index.json"), JSON.stringify(index));
  return written.digest;
}
