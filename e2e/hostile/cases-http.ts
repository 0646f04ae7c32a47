// Hostile rows for the http resolver (http-fixture.ts builds their world):
// SSRF through it (a name resolving to a blocked address, a literal blocked
// address, a non-http scheme), a body over the 1 MiB cap, a digest that does
// not match or is malformed, credentials in the URL, and its password Secret
// asked to reach a host it is not bound to, directly or by a redirect.
import type { Param } from "@quarry/api";
import type { Ctx, HostileCase } from "./cases.ts";

const P = (...pairs: [string, unknown][]): Param[] =>
  pairs.map(([name, value]) => ({ name, value }) as Param);
const AUTH: [string, string][] = [
  ["http-username", "git"],
  ["http-password-secret", "http-creds"],
];

const http = (
  name: string,
  reason: string,
  message: RegExp,
  params: (c: Ctx) => Param[],
  short = false,
): HostileCase => ({
  name: `http-${name}`,
  target: "http",
  reason,
  message,
  request: (c) => ({ params: params(c) }),
  short,
});

/** The one answer for a password Secret that cannot be used for `origin`. */
const unusable = (origin: string) =>
  new RegExp(
    `^param "http-password-secret": Secret [-a-z0-9]+/http-creds key "password" cannot be used as an http password for ${origin}: it is missing, empty or unreadable by the http resolver, or not bound to this URL`,
  );

export const HTTP_CASES: HostileCase[] = [
  http(
    "ssrf-name-resolves-blocked",
    "Forbidden",
    /^param "url": refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
    (c) => P(["url", `${c.http.blockedNameBase}/task.yaml`]),
    true,
  ),
  http(
    "ssrf-literal-blocked",
    "Forbidden",
    /^param "url": refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
    () => P(["url", "http://127.0.0.1:1/task.yaml"]),
  ),
  http(
    "ssrf-file-scheme",
    "InvalidParams",
    /^param "url": "file:\/\/\/etc\/passwd" is not an http or https URL$/,
    () => P(["url", "file:///etc/passwd"]),
  ),
  http(
    "oversize",
    "TooLarge",
    /^param "url": http:\/\/127\.0\.0\.2:\d+\/huge\.yaml is over the 1 MiB limit for resolved data$/,
    (c) => P(["url", `${c.http.sourceBase}/huge.yaml`]),
    true,
  ),
  http(
    "bad-digest",
    "DigestMismatch",
    /^param "digest": the content of http:\/\/127\.0\.0\.2:\d+\/task\.yaml has sha256:[0-9a-f]{64}, not sha256:0{64}$/,
    (c) => P(["url", `${c.http.sourceBase}/task.yaml`], ["digest", `sha256:${"0".repeat(64)}`]),
    true,
  ),
  http(
    "digest-wrong-length",
    "InvalidParams",
    /^param "digest": a sha512 digest has 128 hex digits, got 64$/,
    (c) => P(["url", `${c.http.sourceBase}/task.yaml`], ["digest", `sha512:${c.http.taskSha256}`]),
  ),
  http(
    "credentials-in-url",
    "InvalidParams",
    /^param "url": must not carry credentials/,
    // the password is fixture.ts's SECRETS.urlPassword, which must show nowhere
    (c) => P(["url", `http://git:hostile-url-password-93be5a@${new URL(c.http.sourceBase).host}/task.yaml`]),
  ),
  http(
    "token-other-host",
    "Forbidden",
    unusable("http://127\\.0\\.0\\.3:\\d+"),
    (c) => P(["url", `${c.http.captureBase}/task.yaml`], ...AUTH),
    true,
  ),
  http(
    "token-redirect-other-origin",
    "Forbidden",
    /^param "url": redirected from http:\/\/127\.0\.0\.2:\d+ to another origin http:\/\/127\.0\.0\.3:\d+; not followed$/,
    (c) => P(["url", `${c.http.sourceBase}/away`], ...AUTH),
  ),
];
