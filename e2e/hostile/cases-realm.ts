// Hostile rows for registry credentials bound to their hosts (issue 23): a
// registry whose Bearer realm is on another host (realm-fixture.ts) gets the
// token asked for anonymously, so the request naming a pull Secret fails
// Forbidden saying the credential was withheld; realmCaptureTest then proves
// the realm never saw an Authorization header or the password.
import type { Param } from "@quarry/api";
import type { Ctx, HostileCase } from "./cases.ts";

const P = (...pairs: [string, string][]): Param[] => pairs.map(([name, value]) => ({ name, value }));

export const REALM_CASES: HostileCase[] = [
  {
    name: "bundles-realm-unbound-credential",
    target: "bundles",
    short: true,
    request: (c: Ctx) => ({
      params: P(["bundle", c.realm.bundle], ["name", "build"], ["secret", c.realm.secret]),
    }),
    reason: "Forbidden",
    message:
      /^param "bundle": 127\.0\.0\.2:\d+\/hostile\/private: the token service refused anonymous access \(401\); credentials for 127\.0\.0\.2:\d+ were not sent to token realm 127\.0\.0\.3:\d+ \(not bound to it; see token-realm-hosts\) \(from Secret [-a-z0-9]+\/realm-pull\)$/,
  },
];
