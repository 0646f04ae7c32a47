// The blocked-networks check where a connection is made: a host is resolved
// once, every address it resolves to is checked, and the connection goes to
// those checked addresses (the lookup hands them to the socket), so nothing
// re-resolves between the check and the connect (DNS rebinding). A literal
// address in the URL is checked as written, since sockets skip the lookup.
//
// Through a proxy the proxy connects, not the resolver: the target is
// resolved here and refused when any of its addresses is blocked, before
// anything is sent; a name that does not resolve here is left to the proxy,
// whose own resolution governs (and whose own policy must stop rebinding).
// The proxy's address is the operator's choice and is not checked.
import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { BLOCKED_NETWORKS_KEY, type BlockedNetworks } from "./blocked-networks.ts";
import { EgressError } from "./egress-error.ts";

/** Every address a name resolves to (the system resolver unless a test passes its own). */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

const systemLookup: LookupAll = (hostname) => lookup(hostname, { all: true });

const bare = (host: string) => host.replace(/^\[(.*)\]$/, "$1");

/**
 * The addresses `host` (a URL hostname: a name, an IPv4 or a bracketed IPv6
 * address) is reached at, each checked; an EgressError "blocked-address"
 * naming the host, the address and the key when any of them is blocked.
 */
export async function resolveChecked(
  host: string,
  blocked: BlockedNetworks,
  lookupAll: LookupAll = systemLookup,
): Promise<LookupAddress[]> {
  const name = bare(host);
  const family = isIP(name);
  if (family !== 0) {
    refuseBlocked(host, name, blocked, true);
    return [{ address: name, family }];
  }
  const addresses = await lookupAll(name);
  for (const a of addresses) refuseBlocked(host, a.address, blocked, false);
  return addresses;
}

/** Throws EgressError "blocked-address" when `host` is a literal address in a blocked network; a name passes. */
export function checkLiteralAddress(host: string, blocked: BlockedNetworks): void {
  const name = bare(host);
  if (isIP(name) !== 0) refuseBlocked(host, name, blocked, true);
}

function refuseBlocked(host: string, address: string, blocked: BlockedNetworks, literal: boolean): void {
  const network = blocked.blocking(address);
  if (network === undefined) return;
  const where = literal ? `${address} is in ${network}` : `it resolves to ${address}, in ${network}`;
  throw new EgressError(
    "blocked-address",
    `refusing to connect to ${host}: ${where}, which ${BLOCKED_NETWORKS_KEY} blocks`,
  );
}

/**
 * A `lookup` for net/tls/http(s) Agents and undici's connector: resolves,
 * checks every address, and hands the socket only the checked ones.
 */
export function checkedLookup(blocked: BlockedNetworks, lookupAll: LookupAll = systemLookup): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolveChecked(hostname, blocked, lookupAll).then(
      (all) => {
        const want = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
        const usable = want === 4 || want === 6 ? all.filter((a) => a.family === want) : all;
        const first = usable[0];
        if (!first) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
            code: "ENOTFOUND",
            hostname,
          });
          callback(err, "", 0);
        } else if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/**
 * Before a request to `url`: a literal address is checked as written; through
 * a proxy, the target's addresses as resolved here (a name that does not
 * resolve here is the proxy's to resolve). A name reached directly is checked
 * by checkedLookup when the socket connects.
 */
export async function checkTarget(
  url: URL,
  proxied: boolean,
  blocked: BlockedNetworks,
  lookupAll: LookupAll = systemLookup,
): Promise<void> {
  if (isIP(bare(url.hostname)) !== 0) {
    await resolveChecked(url.hostname, blocked, lookupAll);
    return;
  }
  if (!proxied || blocked.empty) return;
  try {
    await resolveChecked(url.hostname, blocked, lookupAll);
  } catch (err) {
    if (err instanceof EgressError) throw err;
  }
}
