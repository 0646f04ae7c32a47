// The manifest shapes a bundle reader needs (OCI image manifest and index,
// Docker v2 schema 2 manifest and manifest list), parsed defensively: a
// registry's JSON is untrusted input, so every field used is checked here.
import { isDigest } from "./reference.ts";

export const MediaType = {
  OciManifest: "application/vnd.oci.image.manifest.v1+json",
  OciIndex: "application/vnd.oci.image.index.v1+json",
  DockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  DockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
} as const;

/** Accept header for manifest requests: every type we read, most wanted first. */
export const MANIFEST_ACCEPT = [
  MediaType.OciManifest,
  MediaType.DockerManifest,
  MediaType.OciIndex,
  MediaType.DockerManifestList,
].join(", ");

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: Platform;
}

export interface ImageManifest {
  kind: "image";
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  kind: "index";
  mediaType: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export type Manifest = ImageManifest | ImageIndex;

export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ManifestError";
  }
}

/** Parses manifest bytes; `contentType` (the response header) is used when the document has no mediaType. */
export function parseManifest(bytes: Uint8Array, contentType?: string): Manifest {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new ManifestError("manifest is not valid JSON");
  }
  if (!isObject(doc)) throw new ManifestError("manifest is not a JSON object");
  if (doc.schemaVersion !== 2) {
    throw new ManifestError(
      `manifest schemaVersion is ${JSON.stringify(doc.schemaVersion)}, only 2 is supported`,
    );
  }
  const declared = typeof doc.mediaType === "string" ? doc.mediaType : undefined;
  const header = contentType?.split(";")[0]?.trim();
  const mediaType = declared ?? (header && header !== "application/json" ? header : undefined);
  const annotations = stringMap(doc.annotations, "manifest annotations");
  const isIndex =
    mediaType === MediaType.OciIndex ||
    mediaType === MediaType.DockerManifestList ||
    (mediaType === undefined && Array.isArray(doc.manifests));
  if (isIndex) {
    if (!Array.isArray(doc.manifests)) throw new ManifestError("index has no manifests list");
    return {
      kind: "index",
      mediaType: mediaType ?? MediaType.OciIndex,
      manifests: doc.manifests.map((d, i) => descriptor(d, `manifests[${i}]`)),
      ...(annotations ? { annotations } : {}),
    };
  }
  if (
    mediaType !== undefined &&
    mediaType !== MediaType.OciManifest &&
    mediaType !== MediaType.DockerManifest
  ) {
    throw new ManifestError(
      `manifest media type ${JSON.stringify(mediaType)} is not an image manifest or index`,
    );
  }
  if (!Array.isArray(doc.layers)) throw new ManifestError("manifest has no layers list");
  return {
    kind: "image",
    mediaType: mediaType ?? MediaType.OciManifest,
    config: descriptor(doc.config, "config"),
    layers: doc.layers.map((d, i) => descriptor(d, `layers[${i}]`)),
    ...(annotations ? { annotations } : {}),
  };
}

function descriptor(raw: unknown, where: string): Descriptor {
  if (!isObject(raw)) throw new ManifestError(`${where} is not an object`);
  const { mediaType, digest, size } = raw;
  if (typeof mediaType !== "string" || mediaType === "") throw new ManifestError(`${where} has no mediaType`);
  if (typeof digest !== "string" || !isDigest(digest)) {
    throw new ManifestError(`${where} digest ${JSON.stringify(digest)} is not a sha256 digest`);
  }
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
    throw new ManifestError(`${where} size ${JSON.stringify(size)} is not a non-negative integer`);
  }
  const annotations = stringMap(raw.annotations, `${where} annotations`);
  const out: Descriptor = { mediaType, digest, size, ...(annotations ? { annotations } : {}) };
  if (
    isObject(raw.platform) &&
    typeof raw.platform.os === "string" &&
    typeof raw.platform.architecture === "string"
  ) {
    out.platform = {
      os: raw.platform.os,
      architecture: raw.platform.architecture,
      ...(typeof raw.platform.variant === "string" ? { variant: raw.platform.variant } : {}),
    };
  }
  return out;
}

function stringMap(raw: unknown, where: string): Record<string, string> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw new ManifestError(`${where} is not an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== "string")
      throw new ManifestError(`${where}: value of ${JSON.stringify(k)} is not a string`);
    out[k] = v;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
