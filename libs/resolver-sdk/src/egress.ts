// Trust and egress for a resolver's source traffic: extra CAs trusted besides
// the public roots Node ships, an http(s) forward proxy, and the hosts that
// bypass it, read from the resolver's live ConfigMap (keys ca-bundle, proxy,
// no-proxy). Tekton's resolvers take none of this (tektoncd/pipeline#7295,
// #7297); Flux's source-controller and Argo CD's repo-server do, per source.
//
// Requests to https sources go through the proxy as a CONNECT tunnel, so the
// proxy sees host:port and never a credential. A plain-http source behind a
// proxy would hand the proxy every header in clear: egressFetch refuses to
// send credentials that way.
//
// Every connection's address is checked against blocked-networks
// (blocked-networks.ts, checked-lookup.ts), and redirects are followed only
// within the origin (redirects.ts).
import { X509Certificate } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { rootCertificates } from "node:tls";
import { ConfigError } from "@quarry/kube";
import type { buildConnector, Dispatcher } from "undici";
import {
  BLOCKED_NETWORKS_KEY,
  type BlockedNetworks,
  DEFAULT_BLOCKED_NETWORKS,
  parseBlockedNetworks,
} from "./blocked-networks.ts";
import { checkedLookup, checkLiteralAddress, checkTarget } from "./checked-lookup.ts";
import { EgressError, findEgressError } from "./egress-error.ts";
import { followRedirects, isRedirect } from "./redirects.ts";

export { EgressError } from "./egress-error.ts";

type Undici = typeof import("undici");
/**
 * npm undici, imported on the first egress call, not at start: importing it costs a process
 * ~13 MiB of RSS, and a resolver that never fetches through egress (cluster, pipe) never pays it.
 */
let undici: Promise<Undici> | undefined;
const loadUndici = (): Promise<Undici> => {
  undici ??= import("undici");
  return undici;
};

export const EGRESS_KEYS = {
  caBundle: "ca-bundle",
  proxy: "proxy",
  noProxy: "no-proxy",
  blockedNetworks: BLOCKED_NETWORKS_KEY,
} as const;

export interface Egress {
  /** PEM certificates trusted besides Node's public roots; none when unset. */
  caBundle: string | undefined;
  /** http(s) proxy URL for every source not in noProxy; the process's HTTPS_PROXY/HTTP_PROXY when unset. */
  proxy: string | undefined;
  /** Hosts that bypass the proxy (curl's no_proxy syntax, plus CIDRs); the process's NO_PROXY when unset. */
  noProxy: string | undefined;
  /** Networks never connected to; DEFAULT_BLOCKED_NETWORKS (link-local, cloud metadata) when unset. */
  blockedNetworks?: BlockedNetworks | undefined;
}

export const NO_EGRESS: Egress = { caBundle: undefined, proxy: undefined, noProxy: undefined };

/**
 * The egress keys of a ConfigMap, under an optional prefix (git's `<configKey>.`); throws
 * ConfigError naming the key. blocked-networks is read without the prefix only: a request
 * chooses its configKey, and must not choose a weaker policy with it.
 */
export function parseEgress(data: Readonly<Record<string, string>>, prefix = ""): Partial<Egress> {
  const out: Partial<Egress> = {};
  const get = (k: string) => {
    const v = data[prefix + k];
    return v === undefined ? undefined : v.trim();
  };
  const ca = get(EGRESS_KEYS.caBundle);
  if (ca !== undefined)
    out.caBundle = ca === "" ? undefined : parseCaBundle(prefix + EGRESS_KEYS.caBundle, ca);
  const proxy = get(EGRESS_KEYS.proxy);
  if (proxy !== undefined)
    out.proxy = proxy === "" ? undefined : parseProxyUrl(prefix + EGRESS_KEYS.proxy, proxy);
  const noProxy = get(EGRESS_KEYS.noProxy);
  if (noProxy !== undefined) out.noProxy = noProxy === "" ? undefined : noProxy;
  const blocked = data[EGRESS_KEYS.blockedNetworks];
  if (blocked !== undefined) out.blockedNetworks = parseBlockedNetworks(EGRESS_KEYS.blockedNetworks, blocked);
  return out;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** PEM certificates, each parsed, as one normalised bundle; a bundle with none or a broken one is refused. */
export function parseCaBundle(key: string, value: string): string {
  const blocks = value.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0)
    throw new ConfigError(key, "must hold PEM certificates (-----BEGIN CERTIFICATE-----)");
  blocks.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new ConfigError(
        key,
        `certificate ${i + 1} of ${blocks.length} does not parse: ${(err as Error).message}`,
      );
    }
  });
  return `${blocks.join("\n")}\n`;
}

export function parseProxyUrl(key: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(key, `must be an http(s) URL, got "${redactUrl(value)}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(key, `must be an http(s) URL, got "${redactUrl(value)}"`);
  }
  return value;
}

/** The URL without its password, for messages and logs (a proxy URL may carry credentials). */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = "***";
    return url.toString().replace(/\/$/, value.endsWith("/") ? "/" : "");
  } catch {
    return value.replace(/\/\/([^/@:]*):[^/@]*@/, "//$1:***@");
  }
}

/** Every CA a source's certificate may chain to: Node's public roots plus the bundle. */
export function trustedCas(egress: Pick<Egress, "caBundle">): string[] {
  return egress.caBundle
    ? [...rootCertificates, ...(egress.caBundle.match(PEM_BLOCK) ?? [])]
    : [...rootCertificates];
}

/** The settings in force: config first, then the process's proxy environment (as curl reads it). */
export function effectiveEgress(egress: Partial<Egress>, env: NodeJS.ProcessEnv = process.env): Egress {
  return {
    caBundle: egress.caBundle,
    proxy:
      egress.proxy ?? (env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY || undefined),
    noProxy: egress.noProxy ?? (env.no_proxy || env.NO_PROXY || undefined),
    // unset stays unset: every consumer reads it as DEFAULT_BLOCKED_NETWORKS
    ...(egress.blockedNetworks ? { blockedNetworks: egress.blockedNetworks } : {}),
  };
}

/** The proxy a request to `url` goes through, or undefined when it goes direct. */
export function proxyFor(url: string | URL, egress: Egress): string | undefined {
  if (!egress.proxy) return undefined;
  const u = typeof url === "string" ? new URL(url) : url;
  const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  return bypassesProxy(u.hostname, port, egress.noProxy) ? undefined : egress.proxy;
}

/**
 * curl's no_proxy matching: `*` matches every host; an entry matches the host
 * itself and its subdomains (a leading dot is ignored); `host:port` only on
 * that port; an IP or CIDR matches addresses (curl >= 7.86 reads CIDRs too).
 */
export function bypassesProxy(hostname: string, port: number, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    if (entry.includes("/")) {
      if (inCidr(host, entry)) return true;
      continue;
    }
    const { name, entryPort } = splitPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    const bare = name.replace(/^\./, "");
    if (host === bare || (isIP(host) === 0 && host.endsWith(`.${bare}`))) return true;
  }
  return false;
}

function splitPort(entry: string): { name: string; entryPort: number | undefined } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (v6) return { name: v6[1] ?? "", entryPort: v6[2] ? Number(v6[2]) : undefined };
  const m = /^([^:]+):(\d+)$/.exec(entry);
  return m ? { name: m[1] ?? "", entryPort: Number(m[2]) } : { name: entry, entryPort: undefined };
}

function inCidr(host: string, cidr: string): boolean {
  const family = isIP(host);
  const [net, bits] = cidr.split("/");
  if (family === 0 || !net || isIP(net) !== family) return false;
  const list = new BlockList();
  try {
    list.addSubnet(net, Number(bits), family === 4 ? "ipv4" : "ipv6");
  } catch {
    return false;
  }
  return list.check(host, family === 4 ? "ipv4" : "ipv6");
}

/**
 * undici dispatchers for egress settings, kept per setting so connections are
 * reused across requests while the config stays the same. A direct dispatcher
 * connects only to addresses blocked-networks allows: its connector checks a
 * literal address and resolves a name through checkedLookup, so the socket
 * goes to the very addresses that were checked.
 */
export class EgressDispatchers {
  private readonly byKey = new Map<string, Dispatcher>();

  for(url: string | URL, egress: Egress, { Agent, ProxyAgent, buildConnector }: Undici): Dispatcher {
    const proxy = proxyFor(url, egress);
    const blocked = egress.blockedNetworks ?? DEFAULT_BLOCKED_NETWORKS;
    const key = `${proxy ?? ""}\n${egress.caBundle ?? ""}\n${blocked.text}`;
    let d = this.byKey.get(key);
    if (!d) {
      const tls = egress.caBundle ? { ca: trustedCas(egress) } : {};
      d = proxy
        ? new ProxyAgent({ uri: proxy, requestTls: tls, proxyTls: tls })
        : new Agent({
            connect: checkedConnector(buildConnector({ ...tls, lookup: checkedLookup(blocked) }), blocked),
          });
      // settings change rarely; a handful of stale dispatchers is the bound
      if (this.byKey.size >= 16) void this.close();
      this.byKey.set(key, d);
    }
    return d;
  }

  async close(): Promise<void> {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    await Promise.allSettled(all.map((d) => d.close()));
  }
}

/** undici's connector, refusing a blocked literal address before connecting (names go through the lookup). */
function checkedConnector(
  base: buildConnector.connector,
  blocked: BlockedNetworks,
): buildConnector.connector {
  return (opts, callback) => {
    try {
      checkLiteralAddress(opts.hostname, blocked);
    } catch (err) {
      callback(err as Error, null);
      return;
    }
    base(opts, callback);
  };
}

/**
 * A fetch with the egress settings `current()` returns at each call (live
 * config): the proxy and CAs apply, credentials are never sent to a
 * plain-http source through a proxy, no connection goes to a blocked
 * address, and redirects are followed within the origin only (a few hops).
 * With `redirect: "manual"` a 3xx is returned as is, for a caller with its own
 * redirect policy (redirects.ts followRedirects). Failures that retrying
 * cannot fix (an untrusted certificate, a proxy that refuses, a blocked
 * address, a cross-origin redirect) become EgressError.
 */
export function egressFetch(current: () => Egress, dispatchers = new EgressDispatchers()): typeof fetch {
  const once = async (url: URL, init: RequestInit): Promise<Response> => {
    const egress = current();
    const proxy = proxyFor(url, egress);
    const headers = new Headers(init.headers);
    if (proxy && url.protocol === "http:" && headers.has("authorization")) {
      throw new EgressError(
        "credentials-in-clear",
        `refusing to send credentials to ${url.host} over plain http through proxy ${redactUrl(proxy)}: use https, or list ${url.hostname} in no-proxy`,
      );
    }
    await checkTarget(url, proxy !== undefined, egress.blockedNetworks ?? DEFAULT_BLOCKED_NETWORKS);
    const lib = await loadUndici();
    try {
      // undici's own fetch: the dispatcher option is the npm undici's class
      const res = await lib.fetch(url, {
        ...(init as Parameters<Undici["fetch"]>[1]),
        redirect: "manual",
        dispatcher: dispatchers.for(url, egress, lib),
      });
      return res as unknown as Response;
    } catch (err) {
      const own = findEgressError(err);
      if (own) throw own;
      const why = describeEgressFailure(err, url, proxy);
      if (why) throw new EgressError(why.code, why.message, { cause: err });
      throw err;
    }
  };
  const fn = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    if (init.redirect === "manual") return once(url, init);
    if (init.redirect === "error") {
      const res = await once(url, init);
      if (isRedirect(res.status) && res.headers.has("location")) {
        await res.body?.cancel();
        throw new EgressError("redirect", `${url.origin} answered a redirect (${res.status}); not followed`);
      }
      return res;
    }
    return followRedirects(once, url, init);
  };
  return fn as typeof fetch;
}

const TLS_CODES: Readonly<Record<string, string>> = {
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "is signed by an unknown authority",
  UNABLE_TO_GET_ISSUER_CERT: "is signed by an unknown authority",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "is signed by an unknown authority",
  SELF_SIGNED_CERT_IN_CHAIN: "chains to a self-signed CA nobody trusts here",
  DEPTH_ZERO_SELF_SIGNED_CERT: "is self-signed and not trusted here",
  CERT_HAS_EXPIRED: "has expired",
  CERT_NOT_YET_VALID: "is not valid yet",
  ERR_TLS_CERT_ALTNAME_INVALID: "does not name this host",
  CERT_SIGNATURE_FAILURE: "has a bad signature",
};

/**
 * A readable, permanent reason for a connection failure caused by trust or by
 * the proxy, naming the host; undefined for the rest (refused, reset, DNS,
 * timeouts), which the runtime retries.
 */
export function describeEgressFailure(
  err: unknown,
  url: URL,
  proxy: string | undefined,
): { code: "tls" | "proxy-refused"; message: string } | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code in TLS_CODES) {
      const hint =
        code === "CERT_HAS_EXPIRED" ||
        code === "CERT_NOT_YET_VALID" ||
        code === "ERR_TLS_CERT_ALTNAME_INVALID"
          ? ""
          : "; add its CA to the resolver's ca-bundle";
      return {
        code: "tls",
        message: `TLS: the certificate of ${url.host} ${TLS_CODES[code]} (${code})${hint}`,
      };
    }
    const tunnel = /Proxy response \((\d+)\)|tunnel .* via .*: HTTP\/[\d.]+ (\d+)/.exec(e.message);
    if (tunnel && proxy) {
      const status = tunnel[1] ?? tunnel[2];
      return {
        code: "proxy-refused",
        message: `proxy ${redactUrl(proxy)} refused to connect to ${url.host} (HTTP ${status})${status === "407" ? ": it wants credentials in the proxy URL" : ""}`,
      };
    }
  }
  return undefined;
}
