// Addresses a resolver never fetches from, whatever its allow-lists say:
// link-local ones (169.254.0.0/16, fe80::/10), where clouds serve instance
// metadata and the node's credentials, and the metadata services' own names.
// A request naming one is an attempt to read those credentials through the
// resolver (server-side request forgery), not a source. Loopback and private
// ranges stay allowed: in-cluster git servers and registries live there, and
// allowed-urls / allowed-repositories are how an operator narrows them.
import { BlockList, isIP } from "node:net";

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet("169.254.0.0", 16, "ipv4");
LINK_LOCAL.addSubnet("fe80::", 10, "ipv6");
// AWS's IPv6 instance metadata endpoint (a unique-local address, so not covered above)
LINK_LOCAL.addAddress("fd00:ec2::254", "ipv6");

/** Names that resolve to a cloud's metadata service. */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
]);

/**
 * Why `host` (a URL's hostname: IPv6 in brackets, any IPv4 spelling already
 * normalised by the WHATWG URL parser) is a metadata address, or undefined when it is not.
 */
export function metadataHostProblem(host: string): string | undefined {
  const bare = host
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
  const family = isIP(bare);
  // an IPv4-mapped IPv6 address is checked against the IPv4 rules too (BlockList does)
  if (family !== 0 && LINK_LOCAL.check(bare, family === 4 ? "ipv4" : "ipv6"))
    return `${host} is a link-local address, where cloud instance metadata and node credentials are served; resolvers never fetch from it`;
  if (METADATA_NAMES.has(bare))
    return `${host} names a cloud instance metadata service; resolvers never fetch from it`;
  return undefined;
}
