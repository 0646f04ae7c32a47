// Writes a one-layer OCI image layout tar that `ctr images import` reads: the
// layer gzipped (its diff_id is the digest of the plain tar, as the image spec
// asks), a config, a manifest and an index naming the image.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

const run = promisify(execFile);
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

export interface LayoutSizes {
  /** The layer as a plain tar. */
  uncompressed: number;
  /** The gzipped layer, what a registry stores and a pull moves. */
  compressed: number;
}

/**
 * Tars `root` reproducibly (sorted, mtime 0, owned by root) and writes the layout
 * into `layoutDir`, then tars that into `out`.
 */
export async function writeImageLayout(opts: {
  root: string;
  layoutDir: string;
  out: string;
  name: string;
  config: Record<string, unknown>;
  createdBy: string;
}): Promise<LayoutSizes> {
  const plain = join(opts.layoutDir, "..", "layer.tar");
  await run("tar", [
    "--create",
    `--file=${plain}`,
    `--directory=${opts.root}`,
    "--sort=name",
    "--mtime=@0",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--format=gnu",
    ".",
  ]);
  const layer = readFileSync(plain);
  const gz = await promisify(gzip)(layer);
  writeLayoutFiles(opts.layoutDir, {
    layer: gz,
    layerMediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
    diffId: `sha256:${sha256(layer)}`,
    config: opts.config,
    createdBy: opts.createdBy,
    name: opts.name,
  });
  await run("tar", [
    "--create",
    `--file=${opts.out}`,
    `--directory=${opts.layoutDir}`,
    "oci-layout",
    "index.json",
    "blobs",
  ]);
  return { uncompressed: layer.length, compressed: gz.length };
}

/**
 * The files of a one-layer image layout in `dir` (blobs, oci-layout, index.json naming the image
 * for containerd): the layer as given (`layerMediaType` says whether it is gzipped; `diffId` is
 * the digest of its plain tar), its config, its manifest.
 */
export function writeLayoutFiles(
  dir: string,
  image: {
    layer: Buffer;
    layerMediaType: string;
    diffId: string;
    config: Record<string, unknown>;
    createdBy: string;
    name: string;
  },
): void {
  const blobs = join(dir, "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  const put = (bytes: Buffer, mediaType: string) => {
    const hex = sha256(bytes);
    writeFileSync(join(blobs, hex), bytes);
    return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
  };
  const platform = { architecture: process.arch === "x64" ? "amd64" : process.arch, os: "linux" };
  const layerDesc = put(image.layer, image.layerMediaType);
  const config = put(
    Buffer.from(
      JSON.stringify({
        ...platform,
        config: image.config,
        rootfs: { type: "layers", diff_ids: [image.diffId] },
        history: [{ created_by: image.createdBy }],
      }),
    ),
    "application/vnd.oci.image.config.v1+json",
  );
  const manifest = put(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config,
        layers: [layerDesc],
      }),
    ),
    "application/vnd.oci.image.manifest.v1+json",
  );
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [
        {
          ...manifest,
          platform,
          annotations: {
            "io.containerd.image.name": image.name,
            "org.opencontainers.image.ref.name": image.name.split(":").pop(),
          },
        },
      ],
    }),
  );
}

/** The shared libraries ldd lists for a binary, the loader included: what an image without a base needs beside it. */
export async function sharedLibraries(bin: string): Promise<string[]> {
  const { stdout } = await run("ldd", [bin]);
  const libs: string[] = [];
  for (const line of stdout.split("\n")) {
    // "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1]);
  }
  if (libs.length === 0) throw new Error(`ldd ${bin} listed no libraries:\n${stdout}`);
  return libs;
}
