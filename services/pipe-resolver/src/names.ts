// Names of what the pipe resolver creates: the pipe pod (stable per request,
// so a retry finds the pod it made instead of making a second one), the
// ConfigMaps/Secrets (`<owner>-<pipe>-<key>`, stable across retries and
// reruns), and label values. Every name is valid for its kind; a name that
// would not be, as written, is cleaned up and given a hash of what it stands
// for, so two different inputs never share a hashed name.
import { createHash } from "node:crypto";

/** Kubernetes' limit on a DNS-1123 subdomain (a ConfigMap's or Secret's name). */
export const MAX_SUBDOMAIN_LENGTH = 253;
/** Kubernetes' limit on a DNS-1123 label and on a label value. */
export const MAX_LABEL_LENGTH = 63;
/** Hex characters of the hash in a hashed object name (64 bits). */
const OBJECT_HASH_CHARS = 16;
/** Hex characters of the hash in a pod name or a hashed label value (40 bits). */
const SHORT_HASH_CHARS = 10;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function hash(parts: readonly string[], chars: number): string {
  // "\n" never occurs in a Kubernetes name or key, so the parts cannot run into each other.
  return createHash("sha256").update(parts.join("\n")).digest("hex").slice(0, chars);
}

export function isDns1123Subdomain(s: string): boolean {
  return s.length > 0 && s.length <= MAX_SUBDOMAIN_LENGTH && s.split(".").every((l) => DNS1123_LABEL.test(l));
}

export function isLabelValue(s: string): boolean {
  return s.length <= MAX_LABEL_LENGTH && LABEL_VALUE.test(s);
}

/** Lower-cases s and makes each dot-separated part a DNS-1123 label (empty parts dropped), at most max characters. */
function subdomainPrefix(s: string, max: number): string {
  const labels = s
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .split(".")
    .map((l) => l.replace(/^-+|-+$/g, ""))
    .filter((l) => l !== "");
  return trimEnd(labels.join(".").slice(0, max), /[^a-z0-9]+$/);
}

function trimEnd(s: string, tail: RegExp): string {
  return s.replace(tail, "");
}

/**
 * `<owner>-<pipe>-<key>`, the ConfigMap/Secret a pipe entry is stored in: as written when that is a
 * DNS-1123 subdomain of at most 253 characters, else cleaned up (lower case, `_` and other
 * characters to `-`), cut, and ended with `-` and 16 hex characters of a hash of the three parts.
 * Stable: the same three parts always give the same name.
 */
export function outputObjectName(owner: string, pipe: string, key: string): string {
  const plain = `${owner}-${pipe}-${key}`;
  if (isDns1123Subdomain(plain)) return plain;
  const suffix = hash([owner, pipe, key], OBJECT_HASH_CHARS);
  const prefix = subdomainPrefix(plain, MAX_SUBDOMAIN_LENGTH - OBJECT_HASH_CHARS - 1);
  return prefix === "" ? `pipe-${suffix}` : `${prefix}-${suffix}`;
}

export interface RequestIdentity {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * The pipe pod's name for a request: readable (the request's name, cut) and unique to that request
 * object (a hash of its namespace, name and uid, so a request deleted and created again under the
 * same name never meets the old request's pod). At most 63 characters, so the pod's hostname is
 * its name. The same request always gets the same name: a retry finds the pod it made.
 */
export function podName(request: RequestIdentity): string {
  const suffix = hash([request.namespace, request.name, request.uid], SHORT_HASH_CHARS);
  const prefix = trimEnd(
    request.name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+/, "")
      .slice(0, MAX_LABEL_LENGTH - SHORT_HASH_CHARS - "-pipe-".length),
    /-+$/,
  );
  return prefix === "" ? `pipe-${suffix}` : `${prefix}-pipe-${suffix}`;
}

/**
 * s as a label value: unchanged when it is one (at most 63 characters of `[-A-Za-z0-9_.]`, starting
 * and ending alphanumeric), else cut and ended with `-` and a hash of s. Pipe names can be up to 253
 * characters, so they do not always fit.
 */
export function labelValue(s: string): string {
  if (isLabelValue(s)) return s;
  const suffix = hash([s], SHORT_HASH_CHARS);
  const prefix = trimEnd(
    s
      .replace(/[^-A-Za-z0-9_.]+/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "")
      .slice(0, MAX_LABEL_LENGTH - SHORT_HASH_CHARS - 1),
    /[^A-Za-z0-9]+$/,
  );
  return prefix === "" ? suffix : `${prefix}-${suffix}`;
}
