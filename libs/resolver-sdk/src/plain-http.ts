// A credential never travels over plain http unless the operator named the
// host in the resolver config's `insecure-hosts` (a lab server, a loopback
// test server): anyone on the path would read it. Pure.
import { ConfigError } from "@quarry/kube";

export const INSECURE_HOSTS_KEY = "insecure-hosts";

/** An `insecure-hosts` entry: a host as the URL parser spells it, and a port or any. */
export interface InsecureHost {
  hostname: string;
  port: number | undefined;
}

/** `host` or `host:port` (`[v6]` or `[v6]:port`), comma- or newline-separated; `#` starts a comment line. */
export function parseInsecureHosts(raw: string | undefined): InsecureHost[] {
  if (raw === undefined) return [];
  return raw
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .flatMap((line) => line.split(","))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map(parseEntry);
}

function parseEntry(entry: string): InsecureHost {
  const bad = (why: string) =>
    new ConfigError(INSECURE_HOSTS_KEY, `${JSON.stringify(entry)}: ${why}; expected host or host:port`);
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:/[\]@?#\s]+)(?::(\d{1,5}))?$/.exec(entry);
  if (!m) throw bad("not a host");
  let hostname: string;
  try {
    hostname = new URL(`http://${m[1]}`).hostname;
  } catch {
    throw bad("not a host name or address");
  }
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw bad("port out of range");
  return { hostname, port };
}

/** Whether a credential may go to `url`: https always, http only to a listed host (and port, when listed). */
export function mayCarryCredential(url: string, insecureHosts: readonly InsecureHost[]): boolean {
  const u = new URL(url);
  if (u.protocol === "https:") return true;
  if (u.protocol !== "http:") return false;
  const port = u.port === "" ? 80 : Number(u.port);
  return insecureHosts.some((h) => h.hostname === u.hostname && (h.port === undefined || h.port === port));
}
