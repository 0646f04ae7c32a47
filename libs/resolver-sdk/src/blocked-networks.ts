// The networks a resolver never connects to, whatever a request names: the
// `blocked-networks` key of each resolver's ConfigMap. Checked against the
// address a connection actually goes to (checked-lookup.ts), so a host name
// resolving there, a redirect or a token realm cannot get round it the way
// they get round a check of the URL's host string.
//
// The value is the whole list: CIDRs, single addresses and named sets. Unset
// or empty means `default` (link-local and the cloud metadata addresses). A
// list must still block everything `default` blocks (write `default` in it),
// so widening the list can never silently open the metadata service; `none`,
// alone, is the one explicit way to block nothing.
import { BlockList, isIP } from "node:net";
import { ConfigError } from "@quarry/kube";

export const BLOCKED_NETWORKS_KEY = "blocked-networks";

/** Named sets an operator may write in blocked-networks (besides CIDRs and addresses). */
export const NETWORK_SETS: Readonly<Record<string, readonly string[]>> = {
  /** Where clouds serve instance metadata and node credentials, and nothing a resolver fetches from. */
  "link-local": ["169.254.0.0/16", "fe80::/10"],
  /**
   * Metadata services outside link-local: AWS's IPv6 endpoint (unique-local) and Alibaba
   * Cloud's (in the shared 100.64/10 range). 169.254.169.254 is link-local already.
   */
  metadata: ["169.254.169.254/32", "fd00:ec2::254/128", "100.100.100.200/32"],
  /** RFC 1918, IPv6 unique-local and the carrier-grade NAT range many clusters use for pods. */
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"],
  /** This host: 127/8 and ::1, and the unspecified addresses, which Linux connects to this host too. */
  loopback: ["127.0.0.0/8", "::1/128", "0.0.0.0/8", "::/128"],
};
/** `default`: what is blocked when the key is unset, and what every list must keep blocked. */
const DEFAULT_SET = [...(NETWORK_SETS["link-local"] ?? []), ...(NETWORK_SETS.metadata ?? [])];
const SETS: Readonly<Record<string, readonly string[]>> = { default: DEFAULT_SET, ...NETWORK_SETS };

interface Network {
  /** As the operator wrote it, or the CIDR of a named set, for messages. */
  label: string;
  list: BlockList;
  family: 4 | 6;
  address: string;
  prefix: number;
}

/** A parsed blocked-networks list: which entry, if any, holds an address. */
export class BlockedNetworks {
  /** The list in canonical form (sets expanded), e.g. to key connection pools by it. */
  readonly text: string;
  private readonly networks: readonly Network[];

  constructor(networks: readonly Network[]) {
    this.networks = networks;
    this.text = networks.map((n) => `${n.address}/${n.prefix}`).join(",");
  }

  /** Nothing is blocked (the operator wrote `none`). */
  get empty(): boolean {
    return this.networks.length === 0;
  }

  /**
   * The blocked network holding `address` (IPv4, IPv6 with or without
   * brackets or a zone), or undefined. An IPv4-mapped (::ffff:a.b.c.d) or
   * NAT64 (64:ff9b::a.b.c.d) address is also checked as the IPv4 address it
   * reaches.
   */
  blocking(address: string): string | undefined {
    const bare = address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
    const family = isIP(bare);
    if (family === 0) return undefined;
    const candidates: [string, 4 | 6][] = [[bare, family === 4 ? 4 : 6]];
    const embedded = family === 6 ? embeddedIpv4(bare) : undefined;
    if (embedded) candidates.push([embedded, 4]);
    for (const n of this.networks) {
      for (const [a, f] of candidates) {
        // BlockList matches an IPv4 rule against a mapped IPv6 address itself; NAT64 it does not
        if (n.list.check(a, f === 4 ? "ipv4" : "ipv6")) return n.label;
      }
    }
    return undefined;
  }

  /** Whether every address `other` blocks is blocked here too. */
  covers(other: BlockedNetworks): boolean {
    return other.networks.every((o) =>
      this.networks.some(
        (n) => n.family === o.family && n.prefix <= o.prefix && n.list.check(o.address, ipv(o.family)),
      ),
    );
  }
}

/** The list in force when blocked-networks is unset: link-local and the cloud metadata addresses. */
export const DEFAULT_BLOCKED_NETWORKS: BlockedNetworks = buildList(
  BLOCKED_NETWORKS_KEY,
  DEFAULT_SET.map((cidr) => ({ raw: cidr, label: cidr })),
);

/**
 * blocked-networks as written: entries separated by commas, spaces or
 * newlines, each a CIDR, an address or a named set (`default`, `link-local`,
 * `metadata`, `private`, `loopback`); `#` starts a comment to the end of the
 * line. Unset or empty is `default`; `none` alone blocks nothing. A list that
 * does not block what `default` blocks is refused, naming the key.
 */
export function parseBlockedNetworks(key: string, value: string | undefined): BlockedNetworks {
  const entries = (value ?? "")
    .split("\n")
    .map((line) => line.replace(/#.*$/, ""))
    .join(",")
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  if (entries.length === 0) return DEFAULT_BLOCKED_NETWORKS;
  if (entries.includes("none")) {
    if (entries.length > 1)
      throw new ConfigError(
        key,
        `"none" blocks nothing and must be the only entry, got "${entries.join(", ")}"`,
      );
    return new BlockedNetworks([]);
  }
  const expanded = entries.flatMap((e) => {
    const set = SETS[e];
    return set ? set.map((cidr) => ({ raw: cidr, label: cidr })) : [{ raw: e, label: e }];
  });
  const list = buildList(key, expanded);
  if (!list.covers(DEFAULT_BLOCKED_NETWORKS)) {
    throw new ConfigError(
      key,
      `the list leaves link-local or cloud metadata addresses open (${DEFAULT_SET.join(", ")}): add "default" to it, or write "none" alone to block nothing`,
    );
  }
  return list;
}

function buildList(key: string, entries: { raw: string; label: string }[]): BlockedNetworks {
  const seen = new Set<string>();
  const networks: Network[] = [];
  for (const { raw, label } of entries) {
    const n = parseNetwork(key, raw, label);
    const id = `${n.address}/${n.prefix}`;
    if (seen.has(id)) continue;
    seen.add(id);
    networks.push(n);
  }
  return new BlockedNetworks(networks);
}

function parseNetwork(key: string, raw: string, label: string): Network {
  const slash = raw.indexOf("/");
  let address = (slash < 0 ? raw : raw.slice(0, slash)).replace(/^\[(.*)\]$/, "$1");
  const family = isIP(address);
  const bad = (why: string) =>
    new ConfigError(
      key,
      `"${raw}" ${why}; entries are CIDRs (10.96.0.0/12, fd00::/8), addresses, or the sets ${Object.keys(SETS).join(", ")}, or "none" alone`,
    );
  if (family === 0) throw bad("is not an address, a CIDR or a named set");
  const max = family === 4 ? 32 : 128;
  const bits = slash < 0 ? String(max) : raw.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) throw bad(`has a prefix length outside 0-${max}`);
  let prefix = Number(bits);
  let f: 4 | 6 = family === 4 ? 4 : 6;
  // an IPv4-mapped network is written as the IPv4 one, so it is matched the same way
  const mapped = f === 6 && prefix >= 96 ? embeddedIpv4(address, true) : undefined;
  if (mapped) {
    address = mapped;
    prefix -= 96;
    f = 4;
  }
  const list = new BlockList();
  list.addSubnet(address, prefix, ipv(f));
  return { label, list, family: f, address: networkAddress(address, prefix, f), prefix };
}

function ipv(f: 4 | 6): "ipv4" | "ipv6" {
  return f === 4 ? "ipv4" : "ipv6";
}

/** The IPv4 address inside an IPv4-mapped or (unless mappedOnly) a NAT64 well-known-prefix address. */
function embeddedIpv4(v6: string, mappedOnly = false): string | undefined {
  const words = expandIpv6(v6);
  if (!words) return undefined;
  const head = words.slice(0, 6);
  const mapped = head.slice(0, 5).every((w) => w === 0) && head[5] === 0xffff;
  const nat64 =
    !mappedOnly && words[0] === 0x64 && words[1] === 0xff9b && head.slice(2).every((w) => w === 0);
  if (!mapped && !nat64) return undefined;
  const [hi = 0, lo = 0] = words.slice(6);
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** Eight 16-bit words of an IPv6 address (with a trailing dotted IPv4 part allowed). */
function expandIpv6(v6: string): number[] | undefined {
  let text = v6.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const o = dotted[1].split(".").map(Number);
    text = `${text.slice(0, -dotted[1].length)}${(((o[0] ?? 0) << 8) | (o[1] ?? 0)).toString(16)}:${(((o[2] ?? 0) << 8) | (o[3] ?? 0)).toString(16)}`;
  }
  const [left = "", right] = text.split("::");
  const l = left === "" ? [] : left.split(":");
  const r = right === undefined || right === "" ? [] : right.split(":");
  const fill = right === undefined ? 0 : 8 - l.length - r.length;
  const words = [...l, ...Array<string>(Math.max(0, fill)).fill("0"), ...r].map((w) =>
    Number.parseInt(w, 16),
  );
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff)
    ? words
    : undefined;
}

/** The network's first address, so `10.1.2.3/8` and `10.0.0.0/8` are one entry. */
function networkAddress(address: string, prefix: number, f: 4 | 6): string {
  if (f === 4) {
    const n = address.split(".").reduce((acc, o) => acc * 256 + Number(o), 0);
    const size = 2 ** (32 - prefix);
    const base = Math.floor(n / size) * size;
    return [24, 16, 8, 0].map((s) => Math.floor(base / 2 ** s) % 256).join(".");
  }
  const words = expandIpv6(address) ?? [];
  return words
    .map((w, i) => {
      const keep = Math.max(0, Math.min(16, prefix - i * 16));
      return (keep === 0 ? 0 : w & (0xffff << (16 - keep)) & 0xffff).toString(16);
    })
    .join(":");
}
