// What a piped file becomes: a ConfigMap (`binaryData`) or a Secret (`data`)
// per pipe entry, named `<owner>-<pipe>-<key>`, owned by the request's
// controller owner (a Run, so the objects live as long as the run that asked
// for them), else by the request; and the request's `status.data`: a YAML
// list of `{key, kind, name, sha256}` (`hmacSha256` for a Secret: digest.ts).
//
// Nothing here puts a file's content anywhere but the object's data: error
// messages name files, lines and sizes only.
import {
  ANNOTATION_PIPE_KEY,
  LABEL_MANAGED_BY,
  LABEL_PIPE,
  LABEL_REQUEST,
  MANAGED_BY_QUARRY,
  type ObjectMeta,
  type OwnerReference,
  type PipeResult,
  QuarryReason,
  RESOLUTION_REQUEST_KIND,
  RESOLUTION_V1BETA1,
} from "@quarry/api";
import { dump } from "js-yaml";

export type { PipeResult };

import { hmacSha256Hex, sha256Hex } from "./digest.ts";
import { parseEnvFile } from "./envfile.ts";
import { type FileToCopy, MAX_PIPE_FILE_BYTES } from "./files.ts";
import { labelValue, outputObjectName } from "./names.ts";
import type { PipeFailure } from "./validate.ts";

export interface ConfigMap {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: ObjectMeta;
  /** Data key → base64 of the bytes. */
  binaryData: Record<string, string>;
}

export interface Secret {
  apiVersion: "v1";
  kind: "Secret";
  metadata: ObjectMeta;
  type: "Opaque";
  /** Data key → base64 of the bytes. */
  data: Record<string, string>;
}

export type PipeOutput = ConfigMap | Secret;

interface RequestLike {
  metadata: ObjectMeta;
}

/**
 * Who owns the stored files: the request's controller owner (copied as a plain owner, for garbage
 * collection: the pipe resolver does not control a Run), else the request itself.
 */
export function outputOwner(request: RequestLike): OwnerReference {
  const controller = request.metadata.ownerReferences?.find((o) => o.controller === true);
  if (controller)
    return {
      apiVersion: controller.apiVersion,
      kind: controller.kind,
      name: controller.name,
      uid: controller.uid,
    };
  return {
    apiVersion: RESOLUTION_V1BETA1,
    kind: RESOLUTION_REQUEST_KIND,
    name: request.metadata.name ?? "",
    uid: request.metadata.uid ?? "",
  };
}

export type DataResult = { ok: true; data: Map<string, Uint8Array> } | PipeFailure;

/**
 * The data keys and bytes a copied file is stored as: a `file` under its base name; an `envFile` as
 * one key per KEY=VALUE line. Over MAX_PIPE_FILE_BYTES fails TooLarge; a malformed envFile fails
 * InvalidEnvFile naming the line (never its content).
 */
export function outputData(file: FileToCopy, bytes: Uint8Array): DataResult {
  const at = `${file.format} ${JSON.stringify(file.path)} (key ${JSON.stringify(file.key)})`;
  if (bytes.length > MAX_PIPE_FILE_BYTES)
    return {
      ok: false,
      reason: QuarryReason.TooLarge,
      message: `${at} has ${bytes.length} bytes; at most ${MAX_PIPE_FILE_BYTES} (1 MiB) may be piped`,
    };
  if (file.format === "file") return { ok: true, data: new Map([[file.dataKey, bytes]]) };
  const parsed = parseEnvFile(bytes);
  if (!parsed.ok)
    return { ok: false, reason: QuarryReason.InvalidEnvFile, message: `${at}: ${parsed.message}` };
  const encoder = new TextEncoder();
  return {
    ok: true,
    data: new Map([...parsed.entries].map(([k, v]) => [k, encoder.encode(v)])),
  };
}

export interface OutputInput {
  namespace: string;
  file: Pick<FileToCopy, "key" | "kind">;
  /** The Pipe's name (the strategy's for a request without a Pipe). */
  pipeName: string;
  requestName: string;
  owner: OwnerReference;
  data: ReadonlyMap<string, Uint8Array>;
}

/** The name a pipe entry's ConfigMap/Secret gets: `<owner>-<pipe>-<key>` (names.ts). */
export function outputName(owner: OwnerReference, pipeName: string, key: string): string {
  return outputObjectName(owner.name, pipeName, key);
}

/** The ConfigMap or Secret for one pipe entry. */
export function outputObject(input: OutputInput): PipeOutput {
  const encoded = Object.fromEntries(
    [...input.data].map(([k, v]) => [
      k,
      Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64"),
    ]),
  );
  const metadata: ObjectMeta = {
    name: outputName(input.owner, input.pipeName, input.file.key),
    namespace: input.namespace,
    labels: {
      [LABEL_PIPE]: labelValue(input.pipeName),
      [LABEL_REQUEST]: labelValue(input.requestName),
      [LABEL_MANAGED_BY]: MANAGED_BY_QUARRY,
    },
    annotations: { [ANNOTATION_PIPE_KEY]: input.file.key },
    ownerReferences: [{ ...input.owner }],
  };
  return input.file.kind === "Secret"
    ? { apiVersion: "v1", kind: "Secret", metadata, type: "Opaque", data: encoded }
    : { apiVersion: "v1", kind: "ConfigMap", metadata, binaryData: encoded };
}

/**
 * True when an object found under a desired output's name may stand for it (with the same data:
 * the resolver never overwrites): made by Quarry for the same pipe and key, and owned by the same
 * owner (a replay, or a rerun of the same run). Any other object of that name (someone's own
 * ConfigMap, another pipe whose `<owner>-<pipe>-<key>` happens to read the same) is never touched.
 */
export function isOwnOutput(existing: { metadata: ObjectMeta }, desired: PipeOutput): boolean {
  const e = existing.metadata;
  const d = desired.metadata;
  const ownerUid = d.ownerReferences?.[0]?.uid;
  return (
    e.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_QUARRY &&
    e.labels?.[LABEL_PIPE] === d.labels?.[LABEL_PIPE] &&
    e.annotations?.[ANNOTATION_PIPE_KEY] === d.annotations?.[ANNOTATION_PIPE_KEY] &&
    ownerUid !== undefined &&
    (e.ownerReferences ?? []).some((o) => o.uid === ownerUid)
  );
}

export { sha256Hex };

/**
 * The status.data line for a stored file: its key, kind, object name and the digest of the bytes
 * copied: a ConfigMap's SHA-256; a Secret's HMAC-SHA256 under `digestKey` (the installation's key,
 * digest.ts), so a short secret cannot be guessed from it. A Secret without a key is a bug.
 */
export function pipeResult(
  file: Pick<FileToCopy, "key" | "kind">,
  name: string,
  bytes: Uint8Array,
  digestKey?: Uint8Array,
): PipeResult {
  if (file.kind === "ConfigMap") return { key: file.key, kind: file.kind, name, sha256: sha256Hex(bytes) };
  if (!digestKey)
    throw new Error(`pipeResult: the Secret output ${JSON.stringify(name)} needs the digest key`);
  return { key: file.key, kind: file.kind, name, hmacSha256: hmacSha256Hex(digestKey, bytes) };
}

/** A result's fields in a fixed order, with its one digest (sha256 or hmacSha256). */
export function resultFields(r: PipeResult): PipeResult {
  return {
    key: r.key,
    kind: r.kind,
    name: r.name,
    ...(r.sha256 !== undefined ? { sha256: r.sha256 } : {}),
    ...(r.hmacSha256 !== undefined ? { hmacSha256: r.hmacSha256 } : {}),
  };
}

/** The request's status.data (before base64): a YAML list of {key, kind, name, sha256 | hmacSha256}, in pipe order. */
export function statusData(results: readonly PipeResult[]): string {
  return dump(results.map(resultFields), { lineWidth: -1, noRefs: true });
}
