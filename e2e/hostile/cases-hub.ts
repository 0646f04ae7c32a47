// Hostile rows for the hub resolver: SSRF through the per-request `url` (a
// literal blocked address, a metadata host, a non-http scheme), an oversized
// param, and a version that is no go-version constraint. hubresolver-config
// blocks 127.0.0.1/32 as the other resolvers' configs do (fixture.ts).
import type { Param } from "@quarry/api";
import type { HostileCase } from "./cases.ts";

const P = (...pairs: [string, unknown][]): Param[] =>
  pairs.map(([name, value]) => ({ name, value }) as Param);
const TASK: [string, string][] = [
  ["name", "git-clone"],
  ["version", "0.6"],
];

const hub = (name: string, reason: string, message: RegExp, params: Param[], short = false): HostileCase => ({
  name: `hub-${name}`,
  target: "hub",
  reason,
  message,
  request: () => ({ params }),
  short,
});

export const HUB_CASES: HostileCase[] = [
  hub(
    "ssrf-url-blocked",
    "Forbidden",
    /^param "url": Artifact Hub http:\/\/127\.0\.0\.1:1: refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
    P(["url", "http://127.0.0.1:1"], ...TASK),
    true,
  ),
  hub(
    "ssrf-url-metadata",
    "Forbidden",
    /^param "url": Artifact Hub http:\/\/169\.254\.169\.254: /,
    P(["url", "http://169.254.169.254"], ...TASK),
  ),
  hub(
    "ssrf-url-scheme",
    "InvalidParams",
    /^param "url": "file:\/\/\/etc\/passwd" is not an http or https URL$/,
    P(["url", "file:///etc/passwd"], ...TASK),
  ),
  hub(
    "oversize-version",
    "InvalidParams",
    /version/,
    P(["name", "git-clone"], ["version", "1".repeat(1024 * 1024)]),
  ),
  hub(
    "bad-constraint",
    "InvalidParams",
    /^param "version": malformed constraint: >= 1\.0 \|\| < 0\.5; expected a version/,
    P(["name", "git-clone"], ["version", ">= 1.0 || < 0.5"]),
    true,
  ),
];
