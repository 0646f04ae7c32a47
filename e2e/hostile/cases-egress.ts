// Hostile rows for the egress policy (egress-fixture.ts builds their world):
// the address a connection goes to is checked, not the URL's host string, so
// a name resolving to a blocked address, a redirect to another origin and a
// token realm on a blocked address all fail Forbidden, naming the host, the
// address and the key, and the traps behind them see no connection
// (egressCaptureTest, after the sweep).
import type { Param } from "@quarry/api";
import type { Ctx, HostileCase } from "./cases.ts";

const P = (...pairs: [string, unknown][]): Param[] =>
  pairs.map(([name, value]) => ({ name, value }) as Param);

const BLOCKED_LOCALHOST =
  /^param "url": refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks$/;

export const EGRESS_CASES: HostileCase[] = [
  // API mode (repo + org): serverURL is where the resolver connects, so it meets the same egress
  // checks; the operator's API token (fixture.ts configures one) never follows a request elsewhere
  {
    name: "git-api-ssrf-server-url",
    target: "git",
    short: true,
    request: () => ({
      params: P(
        ["repo", "r"],
        ["org", "o"],
        ["serverURL", "http://127.0.0.1:1"],
        ["pathInRepo", "task.yaml"],
      ),
    }),
    reason: "Forbidden",
    message:
      /^params "serverURL", "org", "repo": refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
  },
  // serverURL by a name (localhost) that resolves to a blocked address, where a capture listens:
  // without a token of its own the operator's is withheld before any lookup or connection...
  {
    name: "git-api-ssrf-server-url-name",
    target: "git",
    short: true,
    request: (c: Ctx) => ({
      params: P(
        ["repo", "r"],
        ["org", "o"],
        ["serverURL", c.egress.blockedNameServerUrl],
        ["pathInRepo", "task.yaml"],
      ),
    }),
    reason: "Forbidden",
    message:
      /^param "serverURL": https:\/\/localhost:\d+ is not the server-url in git-resolver-config, and the resolver's API token is only sent there/,
  },
  // ...and with a token Secret bound to exactly that server, the resolved address is what refuses
  // it: the lookup's answer is checked before the socket opens, so no token reaches the capture
  {
    name: "git-api-ssrf-server-url-name-own-token",
    target: "git",
    short: true,
    request: (c: Ctx) => ({
      params: P(
        ["repo", "r"],
        ["org", "o"],
        ["serverURL", c.egress.blockedNameServerUrl],
        ["token", c.egress.blockedNameTokenSecret],
        ["pathInRepo", "task.yaml"],
      ),
    }),
    reason: "Forbidden",
    message:
      /^param "serverURL": refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
  },
  {
    name: "git-api-operator-token-elsewhere",
    target: "git",
    short: true,
    request: () => ({
      params: P(
        ["repo", "r"],
        ["org", "o"],
        ["serverURL", "https://forge.elsewhere.test"],
        ["pathInRepo", "t.yaml"],
      ),
    }),
    reason: "Forbidden",
    message:
      /^param "serverURL": https:\/\/forge\.elsewhere\.test is not the server-url in git-resolver-config, and the resolver's API token is only sent there/,
  },
  {
    name: "git-api-operator-token-other-scm-type",
    target: "git",
    request: () => ({
      params: P(["repo", "r"], ["org", "o"], ["scmType", "gitlab"], ["pathInRepo", "t.yaml"]),
    }),
    reason: "Forbidden",
    message:
      /^param "scmType": gitlab at https:\/\/forge\.quarry\.test is not the forge in git-resolver-config/,
  },
  {
    name: "git-egress-name-resolves-blocked",
    target: "git",
    short: true,
    request: (c: Ctx) => ({ params: P(["url", c.egress.blockedNameUrl], ["pathInRepo", "task.yaml"]) }),
    reason: "Forbidden",
    message: BLOCKED_LOCALHOST,
  },
  {
    name: "git-egress-name-resolves-blocked-commit",
    target: "git",
    request: (c: Ctx) => ({
      params: P(
        ["url", c.egress.blockedNameUrl],
        ["revision", "0123456789abcdef0123456789abcdef01234567"],
        ["pathInRepo", "task.yaml"],
      ),
    }),
    reason: "Forbidden",
    message: BLOCKED_LOCALHOST,
  },
  {
    name: "git-egress-literal-blocked",
    target: "git",
    short: true,
    request: () => ({ params: P(["url", "http://127.0.0.1:1/x.git"], ["pathInRepo", "task.yaml"]) }),
    reason: "Forbidden",
    message:
      /^param "url": refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
  },
  {
    name: "git-egress-mapped-v6-blocked",
    target: "git",
    request: () => ({ params: P(["url", "http://[::ffff:127.0.0.1]:1/x.git"], ["pathInRepo", "task.yaml"]) }),
    reason: "Forbidden",
    message: /^param "url": refusing to connect to \[::ffff:7f00:1\]: ::ffff:7f00:1 is in 127\.0\.0\.1\/32/,
  },
  {
    name: "git-egress-cross-origin-redirect",
    target: "git",
    short: true,
    request: (c: Ctx) => ({
      params: P(["url", c.egress.crossOriginRedirectUrl], ["pathInRepo", "task.yaml"]),
    }),
    reason: "Forbidden",
    message:
      /^param "url": redirected from http:\/\/127\.0\.0\.2:\d+ to another origin http:\/\/127\.0\.0\.3:\d+; not followed$/,
  },
  {
    name: "bundles-egress-realm-blocked",
    target: "bundles",
    short: true,
    request: (c: Ctx) => ({ params: P(["bundle", c.egress.blockedRealmBundle], ["name", "build"]) }),
    reason: "Forbidden",
    message:
      /^param "bundle": 127\.0\.0\.2:\d+\/hostile\/realm: token realm http:\/\/localhost:\d+: refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
  },
  {
    name: "bundles-egress-literal-blocked",
    target: "bundles",
    request: () => ({ params: P(["bundle", "127.0.0.1:1/x/y:v1"], ["name", "build"]) }),
    reason: "Forbidden",
    message:
      /^param "bundle": registry refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32/,
  },
];
