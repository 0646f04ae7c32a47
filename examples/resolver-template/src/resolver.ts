// The smallest real resolver: fetches a Tekton resource over HTTP(S).
// Everything a resolver does not write here (validation, caching,
// single-flight, timeouts, retries, status, Events, metrics) is the SDK's.
import {
  forbidden,
  notFound,
  type Params,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type Resolver,
} from "@quarry/resolver-sdk";

export class HttpResolver implements Resolver {
  readonly type = "http";
  // The runtime checks params against this schema; its messages name the param.
  readonly paramsSchema = {
    type: "object",
    required: ["url"],
    additionalProperties: false,
    properties: { url: { type: "string", pattern: "^https?://" } },
  };

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const url = String(params.url);
    // ctx.signal carries the per-attempt timeout, cancellation and shutdown
    const res = await fetch(url, { signal: ctx.signal, redirect: "follow" });
    // A ResolutionError is terminal; any other error is retried with backoff.
    if (res.status === 404) throw notFound(`param "url": ${url} answered 404 Not Found`);
    if (res.status === 401 || res.status === 403)
      throw forbidden(`param "url": ${url} answered ${res.status}`);
    if (res.status >= 400 && res.status < 500) {
      throw new ResolutionError("InvalidParams", `param "url": ${url} answered ${res.status}`);
    }
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const data = new Uint8Array(await res.arrayBuffer());
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
