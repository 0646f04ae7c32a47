// HttpResolver: Tekton's `http` resolver params on top of the SDK's egress.
// It decides (params, credential policy, status codes, digest) and fetches
// through egressFetch, so every connection is checked on its resolved
// address, redirects stay within the origin, and the operator's CAs and
// proxy apply. Basic auth is sent only to URLs its Secret is bound to.
import { createHash, timingSafeEqual } from "node:crypto";
import {
  checkCredentialBinding,
  configParser,
  EgressDispatchers,
  egressGet,
  forbidden,
  httpStatusError,
  mayCarryCredential,
  metadataHostProblem,
  type Params,
  proxyFor,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
  redactUrl,
  runtimeTimeoutMs,
} from "@quarry/resolver-sdk";
import { type HttpConfig, httpConfigKeys, parseHttpConfig, TEKTON_FETCH_TIMEOUT_MS } from "./config.ts";
import { validateParams } from "./generated/params-validator.js";
import {
  type BasicAuth,
  DIGEST_PARAM,
  type Digest,
  paramsSchema,
  parseRequest,
  pinsContent,
  URL_PARAM,
} from "./params.ts";
import { type PasswordReader, unusablePasswordMessage } from "./secret.ts";

export const ANNOTATION_URL = "resolution.tekton.dev/url";

export interface HttpResolverDeps {
  readPassword: PasswordReader;
}

export class HttpResolver implements Resolver {
  readonly type = "http";
  readonly paramsSchema = paramsSchema;
  readonly compiledParams = validateParams;
  readonly configKeys = httpConfigKeys;
  private readonly config = configParser(parseHttpConfig);
  // connections pooled per egress setting across requests
  private readonly dispatchers = new EgressDispatchers();
  private readonly deps: HttpResolverDeps;

  constructor(deps: HttpResolverDeps) {
    this.deps = deps;
  }

  /** A bad key fails the config load (ConfigError naming it); the last good config stays. */
  validateConfig(config: ResolverConfig): void {
    this.config(config);
  }

  /** Cached in "auto" mode only when a digest pins the content. */
  isImmutable(params: Params): boolean {
    return pinsContent(params);
  }

  /**
   * Tekton's fetch-timeout; unset, the runtime's resolution-timeout when the ConfigMap sets it,
   * else Tekton's default (1m).
   */
  timeout(_params: Params, config: ResolverConfig): number {
    const fetch = this.config(config).fetchTimeoutMs;
    if (fetch !== undefined) return fetch;
    return config["resolution-timeout"]?.trim() ? runtimeTimeoutMs(config) : TEKTON_FETCH_TIMEOUT_MS;
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const req = parseRequest(params);
    const config = this.config(ctx.config);
    // a metadata service's name fails before any DNS lookup
    const problem = metadataHostProblem(req.target.hostname);
    if (problem) throw forbidden(`param "${URL_PARAM}": ${problem}`);
    const headers = new Headers();
    const auth = req.auth ? await this.basicAuth(req.auth, req.target, config, ctx) : undefined;
    if (auth) headers.set("authorization", auth.header);
    const at = `param "${URL_PARAM}": ${req.url}`;
    // ctx.signal carries the per-attempt deadline (fetch-timeout), cancellation and shutdown
    const data = await egressGet(req.target, {
      egress: () => config.egress,
      dispatchers: this.dispatchers,
      signal: ctx.signal,
      headers,
      at,
      refusedAt: `param "${URL_PARAM}"`,
      // every hop of a redirect (within the origin) is checked against the Secret's binding again
      beforeEach: (target) => {
        if (req.auth && auth && target.href !== req.target.href)
          this.checkBinding(req.auth, target, config, ctx, auth.annotations);
      },
      statusError: (status) => statusError(status, at),
    });
    if (req.digest) checkDigest(req.digest, data, req.url);
    return {
      data,
      annotations: { [ANNOTATION_URL]: req.url },
      refSource: { uri: req.url, digest: { sha256: createHash("sha256").update(data).digest("hex") } },
    };
  }

  /**
   * The Authorization header, once the Secret is read and bound to the URL; nothing has been sent
   * yet. Every way the Secret can fail gives the requester one message naming the Secret and the
   * URL's origin, so a request cannot probe which Secrets or keys exist; the log says which.
   */
  private async basicAuth(
    auth: BasicAuth,
    target: URL,
    config: HttpConfig,
    ctx: ResolveContext,
  ): Promise<{ header: string; annotations: Readonly<Record<string, string>> }> {
    if (!mayCarryCredential(target.href, config.insecureHosts)) {
      throw forbidden(
        `param "${URL_PARAM}": refusing to send the http password to ${target.origin} over plain http: use https, or list the host in insecure-hosts in http-resolver-config`,
      );
    }
    const proxy = proxyFor(target, config.egress);
    if (proxy && target.protocol === "http:") {
      // insecure-hosts vouches for the path to the host, not for a proxy that would read the password
      throw forbidden(
        `param "${URL_PARAM}": refusing to send the http password to ${target.origin} over plain http through proxy ${redactUrl(proxy)}: use https, or list the host in no-proxy`,
      );
    }
    const read = await this.deps.readPassword(ctx.namespace, auth.secret, auth.key, ctx.signal);
    if ("problem" in read) throw refuse(auth, target, ctx, read.problem);
    this.checkBinding(auth, target, config, ctx, read.annotations);
    const header = `Basic ${Buffer.from(`${auth.username}:${read.value}`, "utf8").toString("base64")}`;
    return { header, annotations: read.annotations };
  }

  /** Throws the one Forbidden message unless the Secret is bound to `target`. */
  private checkBinding(
    auth: BasicAuth,
    target: URL,
    config: HttpConfig,
    ctx: ResolveContext,
    annotations: Readonly<Record<string, string>>,
  ): void {
    const meta = { namespace: ctx.namespace, name: auth.secret, annotations };
    const binding = checkCredentialBinding(meta, target.href, config.credentialBindings);
    if (!binding.allowed) throw refuse(auth, target, ctx, binding.detail);
    ctx.log.debug(
      { secret: `${ctx.namespace}/${auth.secret}`, url: target.href, by: binding.by },
      "http password bound",
    );
  }
}

/** Logs why the password Secret cannot serve; the requester gets one message naming only names. */
function refuse(auth: BasicAuth, target: URL, ctx: ResolveContext, problem: string): ResolutionError {
  ctx.log.warn(
    { secret: `${ctx.namespace}/${auth.secret}`, key: auth.key, url: target.href, problem },
    "http password refused",
  );
  return forbidden(unusablePasswordMessage(ctx.namespace, auth.secret, auth.key, target.origin));
}

/**
 * A non-200 answer: terminal with a reason, or transient (5xx, 429, 408: retried up to
 * max-attempts, where Tekton fails every non-200 answer at once).
 */
const statusError = (status: number, at: string): Error =>
  httpStatusError(
    status,
    at,
    status === 401 ? " (the server wants credentials: http-username and http-password-secret)" : "",
  );

/** Compares the content's hash with the `digest` param in constant time; DigestMismatch if they differ. */
export function checkDigest(digest: Digest, data: Uint8Array, url: string): void {
  const got = createHash(digest.algorithm).update(data).digest();
  const want = Buffer.from(digest.hex, "hex");
  if (got.length === want.length && timingSafeEqual(got, want)) return;
  throw new ResolutionError(
    "DigestMismatch",
    `param "${DIGEST_PARAM}": the content of ${url} has ${digest.algorithm}:${got.toString("hex")}, not ${digest.algorithm}:${digest.hex}`,
  );
}
