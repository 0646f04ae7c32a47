// The smallest OCI distribution client a bundle reader needs: tag → digest,
// manifests, and blobs, every byte checked against the digest it was asked by.
// Auth: anonymous, Basic, and the Bearer token flow (RFC 6750 + the
// distribution token spec), with tokens cached per repository and credential.
// It never sleeps: 429/5xx/connection failures surface as RegistryError
// "unavailable" carrying Retry-After, and the caller's queue does the backoff.
//
// Redirects are followed here, not by `fetch` (it is called with redirect:
// "manual"): within the origin a request went to, a few hops; to another
// origin only for a blob GET (registries send those to their storage
// backend), never carrying the registry's Authorization, never from https to
// http. Everything else that redirects away fails with RegistryError
// "redirect". Which addresses may be connected to at all is the `fetch`'s
// business: the bundle resolver passes the SDK's egressFetch, which checks
// every connection (the token realm and a blob's storage host included)
// against blocked-networks.
//
// The Basic credential goes to a token realm only when the realm is bound to
// the registry (realm-binding.ts); any other realm is asked for a token
// anonymously, so public repositories still pull and private ones fail with
// the registry's own 401, whose message says the credential was withheld.
import { createHash } from "node:crypto";
import { readCapped } from "@quarry/api";
import { type Challenge, parseChallenges } from "./challenge.ts";
import type { BasicCredential } from "./docker-config.ts";
import { parseRetryAfter, RegistryError } from "./errors.ts";
import { type Descriptor, MANIFEST_ACCEPT, type Manifest, ManifestError, parseManifest } from "./manifest.ts";
import { realmBinding, type TokenRealmPair } from "./realm-binding.ts";
import { apiHost, type ImageReference, isDigest } from "./reference.ts";

export type RepositoryRef = Pick<ImageReference, "registry" | "repository">;

export interface CallOptions {
  credential?: BasicCredential | undefined;
  signal?: AbortSignal | undefined;
  /** Told each time a token is asked for without the credential because the realm is not bound to the registry. */
  onCredentialWithheld?: ((withheld: WithheldCredential) => void) | undefined;
}

/** A credential kept from a token realm: the registry it is for and the realm's host[:port]. */
export interface WithheldCredential {
  registry: string;
  realm: string;
}

/** How a request's redirects are followed (see the header). */
type RedirectRule = "same-origin" | "blob";

const MAX_REDIRECTS = 5;

export interface BlobOptions extends CallOptions {
  /** Refuse blobs larger than this (checked on the descriptor before fetching, and while streaming). */
  maxBytes?: number;
}

export interface FetchedManifest {
  /** Digest computed from the bytes received (and checked against what was asked). */
  descriptor: Descriptor;
  manifest: Manifest;
  bytes: Uint8Array;
}

/** What a resolver needs from a registry; RegistryClient is the real one. */
export interface OciRegistry {
  /** tag or digest → the manifest's descriptor, with one HEAD. */
  resolve(repo: RepositoryRef, reference: string, opts?: CallOptions): Promise<Descriptor>;
  getManifest(repo: RepositoryRef, reference: string, opts?: CallOptions): Promise<FetchedManifest>;
  getBlob(repo: RepositoryRef, descriptor: Descriptor, opts?: BlobOptions): Promise<Buffer>;
}

export interface RegistryClientOptions {
  /** Whether a host (host[:port]) may be reached over plain HTTP; loopback always may. Asked per call, so live config applies. */
  allowsPlainHttp?: (host: string) => boolean;
  /** Registry → token realm pairings the operator allows besides the built-in rule (realm-binding.ts); asked per call. */
  tokenRealmHosts?: () => readonly TokenRealmPair[];
  userAgent?: string;
  maxManifestBytes?: number;
  fetch?: typeof fetch;
}

/** The Authorization to send and, when the credential was kept from the realm, where from. */
interface Auth {
  header: string | undefined;
  withheld?: WithheldCredential | undefined;
}

interface Token {
  value: string;
  expiresAt: number;
}

/** One token request: a repository's pull scope, asked of the realm its registry's challenge named. */
interface TokenAsk {
  repo: RepositoryRef;
  challenge: Challenge;
  realm: URL;
  /** Only ever a credential bound to the realm; undefined asks anonymously. */
  credential: BasicCredential | undefined;
  opts: CallOptions;
  /** Set when the caller's credential was kept from this realm. */
  withheld: WithheldCredential | undefined;
}

const DEFAULT_MAX_MANIFEST = 4 * 1024 * 1024; // distribution's own limit
const DEFAULT_TOKEN_TTL_S = 60; // the token spec's default
const TOKEN_EARLY_EXPIRY_MS = 10_000;
const MAX_TOKENS = 10_000;

export class RegistryClient implements OciRegistry {
  private readonly allowsPlainHttp: (host: string) => boolean;
  private readonly tokenRealmHosts: () => readonly TokenRealmPair[];
  private readonly userAgent: string;
  private readonly maxManifestBytes: number;
  private readonly fetch: typeof fetch;
  /** Last challenge per registry, so later calls authenticate before their first request. */
  private readonly challenges = new Map<string, Challenge>();
  private readonly tokens = new Map<string, Token>();
  private readonly tokenFlights = new Map<string, Promise<Token>>();

  constructor(opts: RegistryClientOptions = {}) {
    this.allowsPlainHttp = opts.allowsPlainHttp ?? (() => false);
    this.tokenRealmHosts = opts.tokenRealmHosts ?? (() => []);
    this.userAgent = opts.userAgent ?? "quarry-oci/0.1";
    this.maxManifestBytes = opts.maxManifestBytes ?? DEFAULT_MAX_MANIFEST;
    this.fetch = opts.fetch ?? globalThis.fetch;
  }

  async resolve(repo: RepositoryRef, reference: string, opts: CallOptions = {}): Promise<Descriptor> {
    const res = await this.send(repo, `manifests/${reference}`, "HEAD", { accept: MANIFEST_ACCEPT }, opts);
    const digest = res.headers.get("docker-content-digest");
    const size = Number(res.headers.get("content-length"));
    const mediaType = res.headers.get("content-type")?.split(";")[0]?.trim() ?? "";
    if (digest && isDigest(digest) && Number.isSafeInteger(size)) {
      if (isDigest(reference) && digest !== reference) {
        throw new RegistryError(
          "digest-mismatch",
          `${where(repo)}: asked for manifest ${reference}, the registry answered for ${digest}`,
        );
      }
      return { mediaType, digest, size };
    }
    // Some registries omit the digest on HEAD: fall back to fetching and hashing.
    return (await this.getManifest(repo, reference, opts)).descriptor;
  }

  async getManifest(
    repo: RepositoryRef,
    reference: string,
    opts: CallOptions = {},
  ): Promise<FetchedManifest> {
    const res = await this.send(repo, `manifests/${reference}`, "GET", { accept: MANIFEST_ACCEPT }, opts);
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > this.maxManifestBytes) {
      await res.body?.cancel();
      throw new RegistryError(
        "too-large",
        `${where(repo)}: manifest ${reference} is ${declared} bytes, over the ${this.maxManifestBytes}-byte limit`,
      );
    }
    const { bytes, digest } = await readHashed(res, this.maxManifestBytes, () => {
      return new RegistryError(
        "too-large",
        `${where(repo)}: manifest ${reference} is over the ${this.maxManifestBytes}-byte limit`,
      );
    });
    const expected = isDigest(reference) ? reference : res.headers.get("docker-content-digest");
    if (expected && isDigest(expected) && expected !== digest) {
      throw new RegistryError(
        "digest-mismatch",
        `${where(repo)}: manifest ${reference} hashes to ${digest}, not ${expected}: refusing bytes that do not match their digest`,
      );
    }
    const contentType = res.headers.get("content-type") ?? undefined;
    let manifest: Manifest;
    try {
      manifest = parseManifest(bytes, contentType);
    } catch (err) {
      if (err instanceof ManifestError) {
        throw new RegistryError("invalid-manifest", `${where(repo)}: manifest ${reference}: ${err.message}`);
      }
      throw err;
    }
    return { descriptor: { mediaType: manifest.mediaType, digest, size: bytes.length }, manifest, bytes };
  }

  async getBlob(repo: RepositoryRef, descriptor: Descriptor, opts: BlobOptions = {}): Promise<Buffer> {
    const max = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    if (descriptor.size > max) {
      throw new RegistryError(
        "too-large",
        `${where(repo)}: blob ${descriptor.digest} is ${descriptor.size} bytes, over the ${max}-byte limit`,
      );
    }
    const res = await this.send(repo, `blobs/${descriptor.digest}`, "GET", {}, opts, "blob");
    // Never read more than the descriptor promised: a registry that sends more is lying.
    const { bytes, digest } = await readHashed(res, descriptor.size, () => {
      return new RegistryError(
        "digest-mismatch",
        `${where(repo)}: blob ${descriptor.digest} sent more than its ${descriptor.size} bytes`,
      );
    });
    if (bytes.length !== descriptor.size || digest !== descriptor.digest) {
      throw new RegistryError(
        "digest-mismatch",
        `${where(repo)}: blob ${descriptor.digest} arrived as ${bytes.length} bytes hashing to ${digest}: refusing bytes that do not match their digest`,
      );
    }
    return bytes;
  }

  // --- transport --------------------------------------------------------------

  private baseUrl(registry: string): string {
    return `${this.schemeFor(registry)}://${apiHost(registry)}/v2/`;
  }

  private schemeFor(hostPort: string): "http" | "https" {
    return isLoopback(hostPort) || this.allowsPlainHttp(hostPort.toLowerCase()) ? "http" : "https";
  }

  /**
   * One registry call with auth: sends what it already knows (a cached token,
   * Basic credentials after a Basic challenge), answers one 401 challenge, and
   * maps failures to RegistryError codes.
   */
  private async send(
    repo: RepositoryRef,
    path: string,
    method: "GET" | "HEAD",
    headers: Record<string, string>,
    opts: CallOptions,
    rule: RedirectRule = "same-origin",
  ): Promise<Response> {
    const url = `${this.baseUrl(repo.registry)}${repo.repository}/${path}`;
    let auth = await this.authorization(repo, opts, undefined);
    for (let attempt = 0; ; attempt++) {
      const res = await this.request(
        url,
        method,
        { ...headers, ...(auth.header ? { authorization: auth.header } : {}) },
        opts,
        rule,
      );
      if (res.status !== 401 || attempt > 0) return this.check(repo, path, res, opts, auth.withheld);
      const challenge = pickChallenge(parseChallenges(res.headers.get("www-authenticate")));
      await res.body?.cancel();
      if (!challenge) return this.check(repo, path, res, opts, auth.withheld);
      this.challenges.set(repo.registry, challenge);
      const next = await this.authorization(repo, opts, auth.header ?? "");
      if (next.header === undefined || next.header === auth.header)
        return this.check(repo, path, res, opts, next.withheld);
      auth = next;
    }
  }

  /** One call and its redirects under `rule`; the first request's origin is the one redirects may stay in. */
  private async request(
    url: string,
    method: string,
    headers: Record<string, string>,
    opts: CallOptions,
    rule: RedirectRule = "same-origin",
  ): Promise<Response> {
    const origin = new URL(url).origin;
    let current = new URL(url);
    let sent: Record<string, string> = { "user-agent": this.userAgent, ...headers };
    for (let hop = 0; ; hop++) {
      const res = await this.requestOnce(current.toString(), method, sent, opts.signal);
      const location = res.headers.get("location");
      if (![301, 302, 303, 307, 308].includes(res.status) || location === null) return res;
      await res.body?.cancel();
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new RegistryError(
          "redirect",
          `${current.origin} redirected to an unreadable location; not followed`,
        );
      }
      if (hop >= MAX_REDIRECTS)
        throw new RegistryError(
          "egress",
          `more than ${MAX_REDIRECTS} redirects from ${origin}; not followed`,
        );
      if (next.protocol !== "https:" && next.protocol !== "http:")
        throw new RegistryError(
          "redirect",
          `${current.origin} redirected to a ${next.protocol} URL; not followed`,
        );
      if (next.origin !== origin) {
        if (rule !== "blob" || (current.protocol === "https:" && next.protocol === "http:")) {
          throw new RegistryError(
            "redirect",
            `redirected from ${origin} to another origin ${next.origin}; not followed${rule === "blob" ? " (a downgrade to plain http)" : ""}`,
          );
        }
        // a storage backend gets the blob request, never the registry's credentials
        sent = Object.fromEntries(Object.entries(sent).filter(([k]) => k.toLowerCase() !== "authorization"));
      }
      current = next;
    }
  }

  private async requestOnce(
    url: string,
    method: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    try {
      return await this.fetch(url, {
        method,
        headers,
        redirect: "manual",
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      // the resolver SDK's egressFetch throws EgressError for trust and proxy refusals (by name:
      // this client does not depend on the SDK)
      if (err instanceof Error && err.name === "EgressError") {
        throw new RegistryError("egress", err.message, { cause: err });
      }
      throw new RegistryError("unavailable", `${hostOf(url)}: ${describeNetworkError(err)}`, { cause: err });
    }
  }

  private async check(
    repo: RepositoryRef,
    path: string,
    res: Response,
    opts: CallOptions,
    withheld: WithheldCredential | undefined,
  ): Promise<Response> {
    if (res.ok) return res;
    const text = res.status === 401 || res.status === 403 ? "" : await safeText(res);
    const what = `${where(repo)}: ${path.replace("/", " ")}`;
    const status = res.status;
    if (status === 401) {
      await res.body?.cancel();
      const who = withheld
        ? "requires credentials"
        : opts.credential
          ? "refused the credentials"
          : "requires credentials (none were found)";
      throw new RegistryError("unauthorized", `${what}: the registry ${who} (401)${withheldHint(withheld)}`, {
        status,
      });
    }
    if (status === 403) {
      await res.body?.cancel();
      throw new RegistryError("denied", `${what}: access denied (403)${withheldHint(withheld)}`, { status });
    }
    if (status === 404)
      throw new RegistryError("not-found", `${what}: not found (404)${registryCode(text)}`, { status });
    if (status === 429 || status >= 500) {
      throw unavailable(res, `${what}: registry answered ${status}${registryCode(text)}`);
    }
    throw new RegistryError("invalid-manifest", `${what}: registry answered ${status}${registryCode(text)}`, {
      status,
    });
  }

  // --- auth -------------------------------------------------------------------

  /**
   * The Authorization header to send, or undefined for anonymous. `rejected` is
   * the header a 401 just refused: a cached token is reused unless it is that
   * one (so calls that raced to the same 401 share the token one of them got).
   * A Bearer realm not bound to the registry gets no credential: the token is
   * asked for anonymously and `withheld` says so.
   */
  private async authorization(
    repo: RepositoryRef,
    opts: CallOptions,
    rejected: string | undefined,
  ): Promise<Auth> {
    const challenge = this.challenges.get(repo.registry);
    if (!challenge) return { header: undefined };
    if (challenge.scheme === "basic") {
      return { header: opts.credential ? basicHeader(opts.credential) : undefined };
    }
    const realm = realmUrl(repo, challenge);
    const bound =
      opts.credential !== undefined &&
      realmBinding({
        registry: repo.registry,
        registryScheme: this.schemeFor(apiHost(repo.registry)),
        realm,
        pairs: this.tokenRealmHosts(),
      }) !== undefined;
    const credential = bound ? opts.credential : undefined;
    const withheld = opts.credential && !bound ? { registry: repo.registry, realm: realm.host } : undefined;
    // a withheld credential shares the anonymous token: it is one
    const key = tokenKey(repo, credential);
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now() && `Bearer ${cached.value}` !== rejected)
      return { header: `Bearer ${cached.value}`, withheld };
    const token = await this.fetchTokenOnce(key, { repo, challenge, realm, credential, opts, withheld });
    return { header: `Bearer ${token.value}`, withheld };
  }

  /** One token request per (repository, credential) at a time, however many calls wait for it. */
  private fetchTokenOnce(key: string, ask: TokenAsk): Promise<Token> {
    const inflight = this.tokenFlights.get(key);
    if (inflight) return inflight;
    const p = this.fetchToken(ask).finally(() => this.tokenFlights.delete(key));
    this.tokenFlights.set(key, p);
    return p;
  }

  /** Asks the realm for a token with the ask's credential, or anonymously. */
  private async fetchToken(ask: TokenAsk): Promise<Token> {
    const { repo, challenge, realm, credential, opts, withheld } = ask;
    const url = new URL(realm);
    if (withheld) opts.onCredentialWithheld?.(withheld);
    if (url.protocol === "http:" && this.schemeFor(url.host) !== "http" && credential) {
      throw new RegistryError(
        "insecure",
        `${where(repo)}: token realm ${url.origin} is plain HTTP; refusing to send credentials there`,
      );
    }
    if (challenge.params.service) url.searchParams.set("service", challenge.params.service);
    url.searchParams.set("scope", `repository:${repo.repository}:pull`);
    const headers: Record<string, string> = { accept: "application/json" };
    if (credential) headers.authorization = basicHeader(credential);
    let res: Response;
    try {
      // the realm is any host the registry names: the fetch checks its address like any other
      res = await this.request(url.toString(), "GET", headers, opts);
    } catch (err) {
      if (err instanceof RegistryError && (err.code === "egress" || err.code === "redirect")) {
        throw new RegistryError(err.code, `${where(repo)}: token realm ${url.origin}: ${err.message}`, {
          cause: err,
        });
      }
      throw err;
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new RegistryError(
        "unauthorized",
        `${where(repo)}: the token service refused ${credential ? "the credentials" : "anonymous access"} (${res.status})${withheldHint(withheld)}`,
        { status: res.status },
      );
    }
    if (res.status === 429 || res.status >= 500) {
      await res.body?.cancel();
      throw unavailable(res, `${where(repo)}: token service answered ${res.status}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new RegistryError(
        "unauthorized",
        `${where(repo)}: token service answered ${res.status}${withheldHint(withheld)}`,
        { status: res.status },
      );
    }
    let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new RegistryError("unauthorized", `${where(repo)}: token service sent no JSON`);
    }
    const value = typeof body.token === "string" ? body.token : body.access_token;
    if (typeof value !== "string" || value === "") {
      throw new RegistryError("unauthorized", `${where(repo)}: token service sent no token`);
    }
    const ttl =
      typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : DEFAULT_TOKEN_TTL_S;
    const token = { value, expiresAt: Date.now() + ttl * 1000 - TOKEN_EARLY_EXPIRY_MS };
    if (this.tokens.size >= MAX_TOKENS) this.pruneTokens();
    this.tokens.set(tokenKey(repo, credential), token);
    return token;
  }

  private pruneTokens(): void {
    const now = Date.now();
    for (const [k, t] of this.tokens) if (t.expiresAt <= now) this.tokens.delete(k);
    if (this.tokens.size >= MAX_TOKENS) this.tokens.clear();
  }
}

/** Reads a body up to `cap` bytes while hashing it; `tooBig` builds the error when it runs over. */
async function readHashed(
  res: Response,
  cap: number,
  tooBig: () => RegistryError,
): Promise<{ bytes: Buffer; digest: string }> {
  const hash = createHash("sha256");
  const bytes = await readCapped(res.body, cap, (chunk) => hash.update(chunk));
  if (!bytes) throw tooBig();
  return { bytes, digest: `sha256:${hash.digest("hex")}` };
}

/** A retryable failure carrying the server's Retry-After, when it sent one. */
function unavailable(res: Response, message: string): RegistryError {
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
  return new RegistryError("unavailable", message, {
    status: res.status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** The Bearer challenge's realm as a URL; a challenge without a usable one cannot be answered. */
function realmUrl(repo: RepositoryRef, challenge: Challenge): URL {
  const realm = challenge.params.realm;
  if (!realm) throw new RegistryError("unauthorized", `${where(repo)}: bearer challenge without a realm`);
  try {
    return new URL(realm);
  } catch {
    throw new RegistryError(
      "unauthorized",
      `${where(repo)}: bearer realm ${JSON.stringify(realm)} is not a URL`,
    );
  }
}

/** Why a request that had a credential was refused anyway: the realm was not bound to the registry. */
function withheldHint(withheld: WithheldCredential | undefined): string {
  return withheld
    ? `; credentials for ${withheld.registry} were not sent to token realm ${withheld.realm} (not bound to it; see token-realm-hosts)`
    : "";
}

function pickChallenge(challenges: Challenge[]): Challenge | undefined {
  return challenges.find((c) => c.scheme === "bearer") ?? challenges.find((c) => c.scheme === "basic");
}

function basicHeader(c: BasicCredential): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;
}

/** Tokens are per repository and per credential; the key holds a hash, never the password. */
function tokenKey(repo: RepositoryRef, c: BasicCredential | undefined): string {
  const who = c ? createHash("sha256").update(`${c.username}\0${c.password}`).digest("hex") : "anonymous";
  return `${repo.registry}/${repo.repository}|${who}`;
}

export function isLoopback(hostPort: string): boolean {
  const host = hostPort
    .replace(/:\d+$/, "")
    .replace(/^\[|\]$/g, "")
    .toLowerCase();
  return host === "localhost" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}

function where(repo: RepositoryRef): string {
  return `${repo.registry}/${repo.repository}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function describeNetworkError(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as { code?: unknown }).code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === "string" ? `${code} (${message})` : message;
}

async function safeText(res: Response): Promise<string> {
  try {
    return (await res.text()).slice(0, 2048);
  } catch {
    return "";
  }
}

/** The distribution error code (MANIFEST_UNKNOWN, ...) when the body carries one. */
function registryCode(text: string): string {
  try {
    const doc = JSON.parse(text) as { errors?: { code?: unknown }[] };
    const code = doc.errors?.[0]?.code;
    return typeof code === "string" ? ` ${code}` : "";
  } catch {
    return "";
  }
}
