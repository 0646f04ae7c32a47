import assert from "node:assert/strict";
import { test } from "node:test";
import { type Params, ParamsValidator, ResolutionError } from "@quarry/resolver-sdk";
import { validateParams } from "./generated/params-validator.js";
import { checkUrl, paramsSchema, parseDigest, parseRequest, pinsContent } from "./params.ts";

const SHA256 = "a".repeat(64);
const SHA512 = "b".repeat(128);

test("parseRequest: Tekton's params, defaults and pairings", () => {
  const url = "https://example.com/task.yaml";
  const cases: [string, Params, Partial<ReturnType<typeof parseRequest>> | RegExp][] = [
    ["url only", { url }, { url, auth: undefined, digest: undefined }],
    [
      "Basic auth, default key",
      { url, "http-username": "git", "http-password-secret": "creds" },
      { auth: { username: "git", secret: "creds", key: "password" } },
    ],
    [
      "Basic auth, named key",
      { url, "http-username": "git", "http-password-secret": "creds", "http-password-secret-key": "token" },
      { auth: { username: "git", secret: "creds", key: "token" } },
    ],
    [
      "an empty key means the default, as Tekton",
      { url, "http-username": "git", "http-password-secret": "creds", "http-password-secret-key": "" },
      { auth: { username: "git", secret: "creds", key: "password" } },
    ],
    [
      "username without secret",
      { url, "http-username": "git" },
      /^param "http-password-secret" is required when "http-username" is given$/,
    ],
    [
      "secret without username",
      { url, "http-password-secret": "creds" },
      /^param "http-username" is required when "http-password-secret" is given$/,
    ],
    [
      "empty username",
      { url, "http-username": "", "http-password-secret": "creds" },
      /^param "http-username" must not be empty$/,
    ],
    [
      "empty secret",
      { url, "http-username": "git", "http-password-secret": "" },
      /^param "http-password-secret" must not be empty$/,
    ],
    [
      "a colon in the username",
      { url, "http-username": "a:b", "http-password-secret": "creds" },
      /^param "http-username" must not contain ":"/,
    ],
    ["sha256 digest", { url, digest: `sha256:${SHA256}` }, { digest: { algorithm: "sha256", hex: SHA256 } }],
    [
      "sha512 digest, upper-case hex",
      { url, digest: `sha512:${SHA512.toUpperCase()}` },
      { digest: { algorithm: "sha512", hex: SHA512 } },
    ],
    ["bad digest", { url, digest: "md5:abc" }, /^param "digest": algorithm "md5" is not supported/],
    ["missing url", {}, /^param "url": is required/],
    [
      "ftp url",
      { url: "ftp://example.com/t.yaml" },
      /^param "url": "ftp:\/\/example.com\/t.yaml" is not an http/,
    ],
  ];
  for (const [name, params, want] of cases) {
    if (want instanceof RegExp) {
      assert.throws(
        () => parseRequest(params),
        (e) => e instanceof ResolutionError && e.reason === "InvalidParams" && want.test(e.message),
        name,
      );
      continue;
    }
    const got = parseRequest(params);
    for (const [k, v] of Object.entries(want))
      assert.deepEqual(got[k as keyof typeof got], v, `${name}: ${k}`);
  }
});

test("checkUrl: absolute http(s) only, no credentials in it", () => {
  const cases: [string, string | RegExp][] = [
    ["https://example.com/a/task.yaml", "https://example.com/a/task.yaml"],
    ["http://127.0.0.1:8080/t.yaml?x=1", "http://127.0.0.1:8080/t.yaml?x=1"],
    ["HTTPS://Example.COM/t.yaml", "https://example.com/t.yaml"],
    ["", /is required/],
    [" https://example.com/t.yaml", /white space/],
    ["/task.yaml", /is not an absolute URL/],
    ["example.com/task.yaml", /is not an absolute URL/],
    ["file:///etc/passwd", /is not an http or https URL/],
    ["gopher://example.com/", /is not an http or https URL/],
    ["https://user:pw@example.com/t.yaml", /must not carry credentials/],
    ["https://user@example.com/t.yaml", /must not carry credentials/],
  ];
  for (const [raw, want] of cases) {
    const got = checkUrl(raw);
    if (typeof want === "string") assert.equal((got as URL).href, want, raw);
    else assert.match((got as { error: string }).error, want, raw);
  }
});

test("parseDigest: sha256 (64 hex) and sha512 (128 hex), as Tekton takes them", () => {
  const cases: [string, { algorithm: string; hex: string } | RegExp][] = [
    [`sha256:${SHA256}`, { algorithm: "sha256", hex: SHA256 }],
    [`sha512:${SHA512}`, { algorithm: "sha512", hex: SHA512 }],
    [`sha256:${"A".repeat(64)}`, { algorithm: "sha256", hex: SHA256 }],
    [SHA256, /is not <algorithm>:<hex>/],
    [`sha1:${"a".repeat(40)}`, /algorithm "sha1" is not supported; use sha256 or sha512/],
    [`SHA256:${SHA256}`, /algorithm "SHA256" is not supported/],
    [`sha256:${"a".repeat(63)}`, /a sha256 digest has 64 hex digits, got 63/],
    [`sha256:${SHA512}`, /a sha256 digest has 64 hex digits, got 128/],
    [`sha512:${SHA256}`, /a sha512 digest has 128 hex digits, got 64/],
    [`sha256:${"g".repeat(64)}`, /is not hexadecimal/],
    ["sha256:", /has 64 hex digits, got 0/],
  ];
  for (const [raw, want] of cases) {
    const got = parseDigest(raw);
    if (want instanceof RegExp) assert.match((got as { error: string }).error, want, raw);
    else assert.deepEqual(got, want, raw);
  }
});

test("pinsContent: a well-formed digest pins the content; nothing else does", () => {
  assert.equal(pinsContent({ url: "https://x/t.yaml", digest: `sha256:${SHA256}` }), true);
  assert.equal(pinsContent({ url: "https://x/t.yaml", digest: `sha512:${SHA512}` }), true);
  assert.equal(pinsContent({ url: "https://x/t.yaml" }), false);
  assert.equal(pinsContent({ url: "https://x/t.yaml", digest: "sha256:abc" }), false);
});

test("the schema: url required, Tekton's params only, strings, capped", () => {
  const v = new ParamsValidator(paramsSchema, validateParams);
  const check = (params: Record<string, unknown>) => v.check(params as Params);
  assert.equal(
    check({
      url: "https://x/t.yaml",
      "http-username": "u",
      "http-password-secret": "s",
      "http-password-secret-key": "k",
      digest: `sha256:${SHA256}`,
    }),
    undefined,
  );
  assert.equal(check({}), 'param "url" is required');
  assert.equal(
    check({ url: "https://x/t.yaml", pathInRepo: "t.yaml" }),
    'param "pathInRepo" is not supported',
  );
  assert.match(check({ url: ["https://x/t.yaml"] }) ?? "", /^param "url" must be string/);
  assert.match(
    check({ url: `https://x/${"a".repeat(5000)}` }) ?? "",
    /^param "url" must NOT have more than 4096/,
  );
});
