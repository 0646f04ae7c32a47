// Which token realm may receive a registry's Basic credential. A pull Secret
// binds its credential to the registry host it is written for; the registry's
// Bearer challenge then names a realm, anywhere it likes (a compromised or
// spoofed registry names any host). The credential follows it only when the
// realm is the registry itself, lies under the registry's parent domain (how
// Docker Hub, GitLab and most self-hosted setups place their token service),
// or the operator paired the two hosts (bundleresolver-config
// token-realm-hosts). Anywhere else the token is asked for anonymously.
import { apiHost } from "./reference.ts";

/** An operator's pairing: the registry (host[:port] as in image references) and a realm host[:port] it may send its credential to. */
export interface TokenRealmPair {
  readonly registry: string;
  readonly realm: string;
}

/** Why a realm is bound to a registry. */
export type RealmBinding = "same-host" | "parent-domain" | "token-realm-hosts";

export interface RealmBindingInput {
  /** host[:port] as in the image reference (docker.io for Docker Hub). */
  registry: string;
  /** The scheme the client speaks to the registry (its default port). */
  registryScheme: "http" | "https";
  realm: URL;
  pairs: readonly TokenRealmPair[];
}

/** How `realm` is bound to `registry`, or undefined when the registry's credential must not go there. */
export function realmBinding(input: RealmBindingInput): RealmBinding | undefined {
  const registry = endpoint(new URL(`${input.registryScheme}://${apiHost(input.registry.toLowerCase())}`));
  const realm = endpoint(input.realm);
  if (registry.hostname === realm.hostname && registry.port === realm.port) return "same-host";
  const parent = parentDomain(registry.hostname);
  if (
    parent !== undefined &&
    !isIpLiteral(realm.hostname) &&
    (realm.hostname === parent || realm.hostname.endsWith(`.${parent}`))
  )
    return "parent-domain";
  if (input.pairs.some((p) => pairMatches(p, input.registry, input.realm))) return "token-realm-hosts";
  return undefined;
}

/** Hostname without a trailing dot and the port in use (the scheme's default when none is written). */
function endpoint(url: URL): { hostname: string; port: string } {
  return { hostname: url.hostname.replace(/\.$/, ""), port: url.port || defaultPort(url.protocol) };
}

function defaultPort(protocol: string): string {
  return protocol === "http:" ? "80" : "443";
}

/** The host minus its first label, when that still has two labels and the host is a name, not an address. */
function parentDomain(hostname: string): string | undefined {
  if (isIpLiteral(hostname)) return undefined;
  const labels = hostname.split(".");
  if (labels.length < 3 || labels.some((l) => l === "")) return undefined;
  return labels.slice(1).join(".");
}

/** A URL-normalised hostname that is an IPv4 or (bracketed) IPv6 address. */
function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(hostname);
}

function pairMatches(pair: TokenRealmPair, registry: string, realm: URL): boolean {
  if (apiHost(pair.registry.toLowerCase()) !== apiHost(registry.toLowerCase())) return false;
  let want: URL;
  try {
    want = new URL(`${realm.protocol}//${pair.realm}`);
  } catch {
    return false;
  }
  // a pair's realm without a port means the realm scheme's default port, never any port
  const got = endpoint(realm);
  return (
    want.hostname.replace(/\.$/, "") === got.hostname &&
    (want.port || defaultPort(realm.protocol)) === got.port
  );
}
