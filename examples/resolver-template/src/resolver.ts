// The smallest real resolver: fetches a Tekton resource over HTTP(S).
// Everything a resolver does not write here (validation, caching,
// single-flight, timeouts, retries, status, Events, metrics) is the SDK's.
//
// It fetches through the SDK's egress, so a resolver copied from it inherits
// the operator's policy: no connection to an address in blocked-networks
// (link-local and cloud metadata by default, checked on the address each
// connection goes to), no redirect to another origin, the ConfigMap's
// proxy and CAs, and a body read no further than the 1 MiB a result may hold.
import {
  configParser,
  EGRESS_KEYS,
  EgressDispatchers,
  EgressError,
  effectiveEgress,
  egressFetch,
  egressReason,
  forbidden,
  metadataHostProblem,
  notFound,
  type Params,
  parseEgress,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
  readCappedBody,
} from "@quarry/resolver-sdk";

export class HttpResolver implements Resolver {
  // the real http resolver (services/http-resolver) answers "http" too: a copy picks its own type
  readonly type = "http";
  // The runtime checks params against this schema; its messages name the param.
  readonly paramsSchema = {
    type: "object",
    required: ["url"],
    additionalProperties: false,
    properties: { url: { type: "string", pattern: "^https?://" } },
  };
  // The ConfigMap's keys this resolver reads besides the runtime's: any other key there is logged
  // and raised as a Warning Event on the ConfigMap, so a typo never silently does nothing.
  readonly configKeys = { known: Object.values(EGRESS_KEYS) };
  // ca-bundle, proxy, no-proxy, blocked-networks from the ConfigMap, parsed once per load
  private readonly egress = configParser((config) => effectiveEgress(parseEgress(config)));
  // connections are pooled per egress setting across requests
  private readonly dispatchers = new EgressDispatchers();

  /** A bad egress key fails the config load (ConfigError naming the key); the last good config stays. */
  validateConfig(config: ResolverConfig): void {
    this.egress(config);
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const url = String(params.url);
    // a metadata service's name fails before any DNS lookup
    const problem = metadataHostProblem(new URL(url).hostname);
    if (problem) throw forbidden(`param "url": ${problem}`);
    const egress = this.egress(ctx.config);
    const fetch = egressFetch(() => egress, this.dispatchers);
    let res: Response;
    try {
      // ctx.signal carries the per-attempt timeout, cancellation and shutdown
      res = await fetch(url, { signal: ctx.signal });
    } catch (err) {
      // the egress policy's refusals are terminal; network errors are retried
      if (err instanceof EgressError)
        throw new ResolutionError(egressReason(err), `param "url": ${err.message}`, { cause: err });
      throw err;
    }
    // A ResolutionError is terminal; any other error is retried with backoff.
    if (res.status === 404) throw notFound(`param "url": ${url} answered 404 Not Found`);
    if (res.status === 401 || res.status === 403)
      throw forbidden(`param "url": ${url} answered ${res.status}`);
    if (res.status >= 400 && res.status < 500) {
      throw new ResolutionError("InvalidParams", `param "url": ${url} answered ${res.status}`);
    }
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const data = await readCappedBody(res, `param "url": ${url}`);
    return {
      data,
      annotations: { "resolution.tekton.dev/url": url },
      refSource: { uri: url, digest: { sha256: await sha256(data) } },
    };
  }
}

async function sha256(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Buffer.from(digest).toString("hex");
}
