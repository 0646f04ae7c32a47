// BundleResolver: Tekton's `bundles` resolver on top of an OciRegistry.
// Tags are resolved to a digest on every request (one HEAD); everything after
// that is addressed by digest, verified, and shared between concurrent
// requests of the same namespace and credential.
import {
  type BasicCredential,
  type CallOptions,
  type Descriptor,
  type FetchedManifest,
  type ImageManifest,
  type OciRegistry,
  RegistryError,
  type RepositoryRef,
  repositoryName,
  type TokenRealmPair,
} from "@quarry/oci";
import {
  checkLiteralAddress,
  configParser,
  DEFAULT_BLOCKED_NETWORKS,
  type Egress,
  EgressError,
  effectiveEgress,
  egressReason,
  findEgressError,
  forbidden,
  metadataHostProblem,
  type Params,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
  runtimeTimeoutMs,
  type WaitBackoff,
} from "@quarry/resolver-sdk";
import { checkBundle, findLayer, invalidBundle, resultAnnotations } from "./bundle.ts";
import { type BundleConfig, bundleConfigKeys, parseBundleConfig } from "./config.ts";
import type { CredentialLoader } from "./credentials.ts";
import { DigestCache, digestKey } from "./digest-cache.ts";
import { validateParams } from "./generated/params-validator.js";
import { extractLayerObject, LayerError } from "./layer.ts";
import { type BundleRequest, paramsSchema, parseRequest, pinsContent } from "./params.ts";

export interface BundleResolverDeps {
  registry: OciRegistry;
  loadCredentials: CredentialLoader;
}

interface CachedManifest {
  fetched: FetchedManifest;
  byteLength: number;
}

export class BundleResolver implements Resolver {
  readonly type = "bundles";
  readonly aliases = ["bundle"];
  readonly paramsSchema = paramsSchema;
  readonly compiledParams = validateParams;
  readonly configKeys = bundleConfigKeys;
  private readonly deps: BundleResolverDeps;
  private readonly config = configParser(parseBundleConfig);
  readonly manifests: DigestCache<CachedManifest>;
  readonly layers: DigestCache<Buffer>;
  /** The last config that parsed: what plain-HTTP decisions outside a resolution use. */
  private current: BundleConfig;

  constructor(deps: BundleResolverDeps, config: BundleConfig = parseBundleConfig({})) {
    this.deps = deps;
    this.current = config;
    this.manifests = new DigestCache(Math.ceil(config.blobCacheBytes / 8));
    this.layers = new DigestCache(config.blobCacheBytes);
  }

  validateConfig(config: ResolverConfig): void {
    this.current = this.config(config);
  }

  isImmutable(params: Params): boolean {
    return pinsContent(params);
  }

  /** Tekton's fetch-timeout, else the runtime's resolution-timeout. */
  timeout(_params: Params, config: ResolverConfig): number {
    const fetch = this.config(config).fetchTimeoutMs;
    return fetch ?? runtimeTimeoutMs(config);
  }

  /** Tekton's backoff-* keys, when the config sets any: the attempts and the delays between them. */
  retryBackoff(config: ResolverConfig): WaitBackoff | undefined {
    return this.config(config).backoff;
  }

  /** Whether plain HTTP may be used for `host` under the live config (the client allows loopback itself). */
  allowsPlainHttp(host: string): boolean {
    return this.current.insecureRegistries.has(host);
  }

  /** Token realms the operator pairs with registries (token-realm-hosts) under the live config. */
  tokenRealmHosts(): readonly TokenRealmPair[] {
    return this.current.tokenRealmHosts;
  }

  /** Trust and proxy for registry traffic under the live config (the registry client asks per call). */
  egress(): Egress {
    return effectiveEgress(this.current.egress);
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const config = this.config(ctx.config);
    this.manifests.resize(Math.ceil(config.blobCacheBytes / 8));
    this.layers.resize(config.blobCacheBytes);
    const req = parseRequest(params, config);
    checkAllowed(req, config);
    const load = (useDefault: boolean) =>
      this.deps.loadCredentials({
        namespace: ctx.namespace,
        secret: req.secret,
        serviceAccount: req.serviceAccount,
        defaultServiceAccount: useDefault ? config.defaultServiceAccount : undefined,
        signal: ctx.signal,
        log: ctx.log,
      });
    // Named credentials are read up front. The default ServiceAccount's are read
    // only when the registry wants credentials: public bundles cost no API call.
    const named = req.secret !== undefined || req.serviceAccount !== undefined;
    let loaded = named ? await load(false) : { credentials: undefined, sources: [] };
    let credential = loaded.credentials?.lookup(req.ref);
    try {
      return await this.fetchEntry(req, credential, config, ctx);
    } catch (err) {
      if (!named && needsCredentials(err)) {
        loaded = await load(true);
        credential = loaded.credentials?.lookup(req.ref);
        if (credential) {
          try {
            return await this.fetchEntry(req, credential, config, ctx);
          } catch (retryErr) {
            throw toResolutionError(retryErr, req, true, loaded.sources);
          }
        }
      }
      throw toResolutionError(err, req, credential !== undefined, loaded.sources);
    }
  }

  private async fetchEntry(
    req: BundleRequest,
    credential: BasicCredential | undefined,
    config: BundleConfig,
    ctx: ResolveContext,
  ): Promise<Resolved> {
    const call = registryCall(credential, ctx.signal, ctx);
    const digest =
      req.ref.digest ?? (await this.deps.registry.resolve(req.ref, req.ref.tag ?? "latest", call)).digest;
    const manifest = await this.imageManifest(req, digest, credential, ctx);
    checkBundle(manifest, req.bundle);
    const layer = findLayer(manifest, req.kind, req.name, req.bundle);
    const data = await this.layerObject(req, layer, credential, config, ctx);
    return {
      data,
      annotations: resultAnnotations(layer),
      refSource: {
        uri: repositoryName(req.ref),
        digest: { sha256: digest.slice("sha256:".length) },
        entryPoint: req.name,
      },
    };
  }

  /** The image manifest at `digest`; an index is followed to its one image (or its linux/amd64 one). */
  private async imageManifest(
    req: BundleRequest,
    digest: string,
    credential: BasicCredential | undefined,
    ctx: ResolveContext,
  ): Promise<ImageManifest> {
    const top = await this.manifest(req.ref, digest, credential, ctx);
    if (top.manifest.kind === "image") return top.manifest;
    const images = top.manifest.manifests;
    const pick =
      images.length === 1
        ? images[0]
        : images.find((d) => d.platform?.os === "linux" && d.platform.architecture === "amd64");
    if (!pick) {
      throw invalidBundle(
        `param "bundle": ${req.bundle} is an image index of ${images.length} images with none for linux/amd64; name one image by digest`,
      );
    }
    const child = await this.manifest(req.ref, pick.digest, credential, ctx);
    if (child.manifest.kind !== "image") {
      throw invalidBundle(`param "bundle": ${req.bundle} is an index of indexes; name one image by digest`);
    }
    return child.manifest;
  }

  private async manifest(
    repo: RepositoryRef,
    digest: string,
    credential: BasicCredential | undefined,
    ctx: ResolveContext,
  ): Promise<FetchedManifest> {
    const key = digestKey(ctx.namespace, repositoryName(repo), credential, digest);
    const entry = await this.manifests.get(key, ctx.signal, async (signal) => {
      const fetched = await this.deps.registry.getManifest(
        repo,
        digest,
        registryCall(credential, signal, ctx),
      );
      return { fetched, byteLength: fetched.bytes.byteLength };
    });
    return entry.fetched;
  }

  private async layerObject(
    req: BundleRequest,
    layer: Descriptor,
    credential: BasicCredential | undefined,
    config: BundleConfig,
    ctx: ResolveContext,
  ): Promise<Buffer> {
    // checked here too, not only in the client: a layer cached under a larger limit must not outlive a lowered one
    if (layer.size > config.maxLayerBytes) {
      throw new RegistryError(
        "too-large",
        `layer ${layer.digest} is ${layer.size} bytes, over the ${config.maxLayerBytes}-byte max-layer-size`,
      );
    }
    const key = digestKey(ctx.namespace, repositoryName(req.ref), credential, layer.digest);
    return this.layers.get(key, ctx.signal, async (signal) => {
      const blob = await this.deps.registry.getBlob(req.ref, layer, {
        ...registryCall(credential, signal, ctx),
        maxBytes: config.maxLayerBytes,
      });
      return extractLayerObject(blob, config.maxLayerBytes);
    });
  }
}

/** A registry call's options; a credential kept from an unbound token realm is logged, not put in the status. */
function registryCall(
  credential: BasicCredential | undefined,
  signal: AbortSignal,
  ctx: ResolveContext,
): CallOptions {
  return {
    credential,
    signal,
    onCredentialWithheld: ({ registry, realm }) =>
      ctx.log.warn(
        { registry, realm },
        "pull credential withheld: the token realm is not the registry's host, under its parent domain or paired in token-realm-hosts; asking for an anonymous token",
      ),
  };
}

function needsCredentials(err: unknown): boolean {
  return err instanceof RegistryError && (err.code === "unauthorized" || err.code === "denied");
}

function checkAllowed(req: BundleRequest, config: BundleConfig): void {
  // the URL parser normalises the host (IPv4 in any spelling, IPv6 in brackets) as a fetch would
  const host = new URL(`https://${req.ref.registry}`).hostname;
  const problem = metadataHostProblem(host);
  if (problem) throw forbidden(`param "bundle": registry ${problem}`);
  // a literal address fails before any credential is read; names are checked where they
  // resolve, on every connection (the registry, its token realm, a blob's storage host)
  try {
    checkLiteralAddress(host, config.egress.blockedNetworks ?? DEFAULT_BLOCKED_NETWORKS);
  } catch (err) {
    if (err instanceof EgressError) throw forbidden(`param "bundle": registry ${err.message}`);
    throw err;
  }
  if (config.allowedRepositories.length === 0) return;
  const name = repositoryName(req.ref);
  if (!config.allowedRepositories.some((re) => re.test(name))) {
    throw forbidden(
      `param "bundle": repository ${name} is not in the bundle resolver's allowed-repositories`,
    );
  }
}

/** Registry and layer failures → the request's reason; retryable ones stay plain errors for the runtime. */
export function toResolutionError(
  err: unknown,
  req: BundleRequest,
  withCredential: boolean,
  sources: readonly string[],
): Error {
  if (err instanceof ResolutionError) return err;
  if (err instanceof LayerError) {
    return new ResolutionError(
      err.tooLarge ? "TooLarge" : "InvalidBundle",
      `param "bundle": ${req.kind} ${JSON.stringify(req.name)} of ${req.bundle}: ${err.message}`,
      { cause: err },
    );
  }
  if (!(err instanceof RegistryError)) return err instanceof Error ? err : new Error(String(err));
  const from = sources.length ? ` (from ${sources.join(", ")})` : "";
  switch (err.code) {
    case "unauthorized":
      return new ResolutionError(
        "Forbidden",
        withCredential
          ? `param "bundle": ${err.message}${from}`
          : `param "bundle": ${err.message}; name an image pull Secret in "secret" or a ServiceAccount in "serviceAccount"`,
        { cause: err },
      );
    case "egress": {
      // an untrusted certificate or a refusing proxy: retrying cannot help; a blocked address or
      // credentials that would cross a proxy in clear are a policy refusal
      const egress = findEgressError(err);
      return new ResolutionError(
        egress ? egressReason(egress) : "SourceUnavailable",
        `param "bundle": ${err.message}`,
        { cause: err },
      );
    }
    case "redirect":
    case "denied":
    case "insecure":
      return new ResolutionError("Forbidden", `param "bundle": ${err.message}${from}`, { cause: err });
    case "not-found":
      return new ResolutionError("NotFound", `param "bundle": ${err.message}`, { cause: err });
    case "digest-mismatch":
      return new ResolutionError("DigestMismatch", `param "bundle": ${err.message}`, { cause: err });
    case "too-large":
      return new ResolutionError("TooLarge", `param "bundle": ${err.message}`, { cause: err });
    case "invalid-manifest":
      return new ResolutionError("InvalidBundle", `param "bundle": ${err.message}`, { cause: err });
    case "unavailable":
      return err;
  }
}
