// Pull credentials from Kubernetes image pull Secrets
// (kubernetes.io/dockerconfigjson: {"auths": {...}}, and the legacy
// kubernetes.io/dockercfg: {...}), matched to an image the way the kubelet's
// keyring matches: by registry host (with a "*." wildcard per DNS label) and an
// optional repository path prefix, the most specific entry winning.

import type { ImageReference } from "./reference.ts";
import { DOCKER_HUB } from "./reference.ts";

export interface BasicCredential {
  readonly username: string;
  readonly password: string;
}

interface Entry {
  host: string;
  path: string;
  credential: BasicCredential;
}

export class DockerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DockerConfigError";
  }
}

const DOCKER_HUB_ALIASES = new Set([
  "docker.io",
  "index.docker.io",
  "registry-1.docker.io",
  "registry.hub.docker.com",
]);

/** Credentials from one or more docker config documents, first document first. */
export class DockerCredentials {
  private readonly entries: Entry[] = [];

  /** Adds a Secret's config; `source` names it in error messages (never its content). */
  add(json: string, source: string): void {
    let doc: unknown;
    try {
      doc = JSON.parse(json);
    } catch {
      throw new DockerConfigError(`${source} is not valid JSON`);
    }
    if (!isObject(doc)) throw new DockerConfigError(`${source} is not a JSON object`);
    const auths = isObject(doc.auths) ? doc.auths : doc;
    for (const [key, raw] of Object.entries(auths)) {
      if (!isObject(raw)) continue;
      const credential = credentialOf(raw, key, source);
      if (!credential) continue;
      const { host, path } = splitKey(key);
      if (host) this.entries.push({ host, path, credential });
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The credential for an image, or undefined (anonymous). */
  lookup(ref: Pick<ImageReference, "registry" | "repository">): BasicCredential | undefined {
    const host = normaliseHost(ref.registry);
    let best: Entry | undefined;
    for (const entry of this.entries) {
      if (!hostMatches(entry.host, host)) continue;
      if (entry.path && !pathMatches(entry.path, ref.repository)) continue;
      if (!best || specificity(entry) > specificity(best)) best = entry;
    }
    return best?.credential;
  }
}

function credentialOf(
  raw: Record<string, unknown>,
  key: string,
  source: string,
): BasicCredential | undefined {
  if (typeof raw.username === "string" && typeof raw.password === "string" && raw.username !== "") {
    return { username: raw.username, password: raw.password };
  }
  if (typeof raw.auth === "string" && raw.auth !== "") {
    const decoded = Buffer.from(raw.auth, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon <= 0)
      throw new DockerConfigError(
        `${source}: the "auth" of ${JSON.stringify(key)} is not base64 of user:password`,
      );
    return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return undefined;
}

function splitKey(key: string): { host: string; path: string } {
  let rest = key.trim().replace(/^[a-z]+:\/\//i, "");
  rest = rest.replace(/\/+$/, "").replace(/\/v[12]$/, "");
  const slash = rest.indexOf("/");
  const host = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash + 1);
  return { host: normaliseHost(host), path };
}

function normaliseHost(host: string): string {
  const lower = host.toLowerCase();
  return DOCKER_HUB_ALIASES.has(lower) ? DOCKER_HUB : lower;
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === host) return true;
  if (!pattern.includes("*")) return false;
  const [pHost, pPort] = splitPort(pattern);
  const [hHost, hPort] = splitPort(host);
  if (pPort !== hPort) return false;
  const p = pHost.split(".");
  const h = hHost.split(".");
  if (p.length !== h.length) return false;
  return p.every((label, i) => label === "*" || label === h[i]);
}

function splitPort(host: string): [string, string] {
  const m = /^(.*?)(?::(\d+))?$/.exec(host);
  return [m?.[1] ?? host, m?.[2] ?? ""];
}

function pathMatches(prefix: string, repository: string): boolean {
  return repository === prefix || repository.startsWith(`${prefix}/`);
}

function specificity(entry: Entry): number {
  return (entry.host.includes("*") ? 0 : 1_000_000) + entry.path.length;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
