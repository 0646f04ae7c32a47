// Where the git binary connects: the repository's host is resolved here,
// every address checked against blocked-networks, and git is told to use
// exactly those (curl's CURLOPT_RESOLVE through http.curloptResolve), so it
// never resolves the name again between the check and the connect. A literal
// address needs no pin (it is checked as written); through a proxy the proxy
// resolves, after the target was checked here (checkTarget).
import { isIP } from "node:net";
import { checkTarget, DEFAULT_BLOCKED_NETWORKS, type LookupAll, resolveChecked } from "@quarry/resolver-sdk";
import { toSourceError } from "../network-errors.ts";
import type { SourceRequest } from "../source.ts";

/** The `host:port:addr[,addr]` entry for http.curloptResolve, or undefined when none is needed. */
export async function pinnedResolve(
  url: string,
  req: Pick<SourceRequest, "proxy" | "blockedNetworks" | "signal">,
  lookupAll?: LookupAll,
): Promise<string | undefined> {
  const u = new URL(url);
  const blocked = req.blockedNetworks ?? DEFAULT_BLOCKED_NETWORKS;
  try {
    await checkTarget(u, req.proxy !== undefined, blocked, lookupAll);
    if (req.proxy !== undefined || isIP(u.hostname.replace(/^\[(.*)\]$/, "$1")) !== 0) return undefined;
    const addresses = await resolveChecked(u.hostname, blocked, lookupAll);
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    // curl takes IPv6 addresses in brackets (7.57+; bookworm ships 7.88)
    const list = addresses.map((a) => (a.family === 6 ? `[${a.address}]` : a.address)).join(",");
    return `${u.hostname}:${port}:${list}`;
  } catch (err) {
    throw toSourceError(url, err, req.signal, req.proxy);
  }
}
