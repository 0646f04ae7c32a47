// OCI image references as the distribution spec and Docker name them:
// [registry/]repository[:tag][@digest]. Docker Hub's short forms ("alpine",
// "team/tool") expand the way every client expands them, so a reference that
// works with `tkn` or `crane` means the same thing here.

export interface ImageReference {
  /** Host[:port] as written (docker.io for Docker Hub). */
  readonly registry: string;
  /** Repository path inside the registry, e.g. "library/alpine" or "team/bundles". */
  readonly repository: string;
  readonly tag?: string;
  /** "sha256:<64 hex>" when the reference pins content. */
  readonly digest?: string;
}

export const DOCKER_HUB = "docker.io";
/** Where Docker Hub's API lives; "docker.io" itself only redirects. */
export const DOCKER_HUB_API = "registry-1.docker.io";
export const DEFAULT_TAG = "latest";

// distribution/reference grammar, one path component at a time
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^([a-z0-9]+(?:[.+_-][a-z0-9]+)*):([0-9a-fA-F]{32,})$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const MAX_NAME = 255;

export class InvalidReferenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidReferenceError";
  }
}

/** Parses an image reference; throws InvalidReferenceError with a message naming what is wrong. */
export function parseReference(input: string): ImageReference {
  const text = input.trim();
  if (text === "") throw new InvalidReferenceError("image reference is empty");
  if (/\s/.test(text))
    throw new InvalidReferenceError(`image reference ${JSON.stringify(input)} contains whitespace`);
  if (text.includes("://")) {
    throw new InvalidReferenceError(`image reference ${JSON.stringify(input)} must not have a URL scheme`);
  }

  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    checkDigest(digest, input);
  }

  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag))
      throw new InvalidReferenceError(`tag ${JSON.stringify(tag)} of ${JSON.stringify(input)} is not valid`);
  }

  const parts = rest.split("/");
  let registry = DOCKER_HUB;
  const first = parts[0] ?? "";
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost")) {
    registry = first;
    parts.shift();
  }
  if (!/^[A-Za-z0-9.-]+(?::[0-9]+)?$/.test(registry) && !/^\[[0-9a-fA-F:]+\](?::[0-9]+)?$/.test(registry)) {
    throw new InvalidReferenceError(
      `registry ${JSON.stringify(registry)} of ${JSON.stringify(input)} is not a host[:port]`,
    );
  }
  if (registry === "index.docker.io" || registry === DOCKER_HUB_API) registry = DOCKER_HUB;
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift("library");
  for (const part of parts) {
    if (!COMPONENT.test(part)) {
      throw new InvalidReferenceError(
        `repository ${JSON.stringify(parts.join("/"))} of ${JSON.stringify(input)} is not valid (lower-case letters, digits and separators)`,
      );
    }
  }
  const repository = parts.join("/");
  if (`${registry}/${repository}`.length > MAX_NAME) {
    throw new InvalidReferenceError(
      `repository name of ${JSON.stringify(input)} is longer than ${MAX_NAME} characters`,
    );
  }
  if (!tag && !digest) tag = DEFAULT_TAG;
  return { registry, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

function checkDigest(digest: string, input: string): void {
  const m = DIGEST.exec(digest);
  if (!m)
    throw new InvalidReferenceError(
      `digest ${JSON.stringify(digest)} of ${JSON.stringify(input)} is not valid`,
    );
  if (m[1] !== "sha256") {
    throw new InvalidReferenceError(
      `digest algorithm ${JSON.stringify(m[1])} of ${JSON.stringify(input)} is not supported (sha256 only)`,
    );
  }
  if (!SHA256_HEX.test(m[2] ?? "")) {
    throw new InvalidReferenceError(
      `digest ${JSON.stringify(digest)} of ${JSON.stringify(input)} is not 64 lower-case hex characters`,
    );
  }
}

/** "registry/repository", no tag or digest: what Tekton records as a bundle's refSource uri. */
export function repositoryName(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}`;
}

/** The manifest reference to ask the registry for: the digest when pinned, else the tag. */
export function manifestReference(ref: ImageReference): string {
  return ref.digest ?? ref.tag ?? DEFAULT_TAG;
}

export function formatReference(ref: ImageReference): string {
  return `${repositoryName(ref)}${ref.tag ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/** The host the registry API answers on (Docker Hub's API is not at docker.io). */
export function apiHost(registry: string): string {
  return registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
}

export function isDigest(value: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(value);
}
