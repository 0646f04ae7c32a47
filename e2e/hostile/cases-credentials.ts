// Hostile rows for credentials bound to hosts (issue 23, part 1) and Secret
// errors that do not tell a requester what exists (part 4). The world
// (credentials-fixture.ts) binds git-creds to the private repository by Tekton's
// annotation and to one capture server by config; the other capture server is
// in insecure-hosts but bound to nothing. After the sweep both captures must
// have seen no connection at all (credentialCaptureTest).
import type { Param } from "@quarry/api";
import type { Ctx, HostileCase } from "./cases.ts";

const P = (...pairs: [string, string][]): Param[] => pairs.map(([name, value]) => ({ name, value }));

const git = (name: string, reason: string, message: RegExp, params: (c: Ctx) => Param[]): HostileCase => ({
  name: `git-cred-${name}`,
  target: "git",
  reason,
  message,
  request: (c) => ({ params: params(c) }),
  short: true,
});

const NS = "[-a-z0-9]+";
const ANY_URL = "http://[^ ]+";

/** The one message for a gitToken that cannot be used, whatever is wrong (missing, no key, empty, unbound). */
export const unusableToken = (secret: string, key: string, url: string): RegExp =>
  new RegExp(
    `^param "gitToken": Secret ${NS}/${secret} key "${key}" cannot be used as a git token for ${url}: it is missing, empty or unreadable by the git resolver, or not bound to this URL \\(the resolver's log says which\\)$`,
  );

/** Rows whose messages must be the same text once the names a request gave are taken out. */
export const ORACLE_ROWS: readonly { name: string; secret: string; key: string }[] = [
  { name: "git-cred-oracle-missing-secret", secret: "ghost-creds", key: "token" },
  { name: "git-cred-oracle-missing-key", secret: "git-creds", key: "ghost-key" },
  { name: "git-cred-oracle-empty-key", secret: "empty-creds", key: "token" },
];

export const CREDENTIAL_CASES: HostileCase[] = [
  // (a) a bound token asked to a host it is not bound to (plain http allowed there): refused before any I/O
  git(
    "unbound-host",
    "Forbidden",
    unusableToken("git-creds", "token", "http://127\\.0\\.0\\.3:\\d+/team/private\\.git"),
    (c) => P(["url", c.credentials.unboundUrl], ["pathInRepo", "task.yaml"], ["gitToken", "git-creds"]),
  ),
  // (b) bound to the URL, but plain http to a host not in insecure-hosts
  git(
    "plain-http",
    "Forbidden",
    /^param "url": refusing to send the gitToken to http:\/\/127\.0\.0\.3:\d+\/team\/private\.git over plain http: use https, or list the host in insecure-hosts in git-resolver-config$/,
    (c) => P(["url", c.credentials.plainHttpUrl], ["pathInRepo", "task.yaml"], ["gitToken", "git-creds"]),
  ),
  // (c) whether the Secret or the key exists, or the value is empty, the requester reads the same message
  ...ORACLE_ROWS.map(({ name, secret, key }) =>
    git(
      name.replace(/^git-cred-/, ""),
      "Forbidden",
      unusableToken(secret, key, `${ANY_URL}/team/private\\.git`),
      (c) =>
        P(["url", c.privateUrl], ["pathInRepo", "task.yaml"], ["gitToken", secret], ["gitTokenKey", key]),
    ),
  ),
];
