import assert from "node:assert/strict";
import { test } from "node:test";
import { ParamsValidator, ResolutionError } from "@quarry/resolver-sdk";
import { parseGitConfig } from "./config.ts";
import { validateParams } from "./generated/params-validator.js";
import { checkUrl, normalisePath, paramsSchema, parseRequest } from "./params.ts";

const SHA1 = "0123456789abcdef0123456789abcdef01234567";

test("normalisePath", () => {
  const cases: [string, string | { error: string }][] = [
    ["task.yaml", "task.yaml"],
    ["tasks/build/task.yaml", "tasks/build/task.yaml"],
    ["/tasks/build/task.yaml", "tasks/build/task.yaml"],
    ["./tasks//build/./task.yaml", "tasks/build/task.yaml"],
    ["tasks/build/", "tasks/build"],
    ["dir with space/t.yaml", "dir with space/t.yaml"],
    ["a\\b.yaml", "a\\b.yaml"],
    ["", { error: "must not be empty" }],
    ["/", { error: 'names the repository root, not a file (got "/")' }],
    [".", { error: 'names the repository root, not a file (got ".")' }],
    ["..", { error: 'must not contain ".." (got "..")' }],
    ["../etc/passwd", { error: 'must not contain ".." (got "../etc/passwd")' }],
    ["tasks/../../etc/passwd", { error: 'must not contain ".." (got "tasks/../../etc/passwd")' }],
    ["tasks/../task.yaml", { error: 'must not contain ".." (got "tasks/../task.yaml")' }],
    ["/../../etc/passwd", { error: 'must not contain ".." (got "/../../etc/passwd")' }],
    ["a\u0000b", { error: "must not contain control characters" }],
    ["a\nb", { error: "must not contain control characters" }],
  ];
  for (const [input, want] of cases) assert.deepEqual(normalisePath(input), want, JSON.stringify(input));
});

test("checkUrl", () => {
  const cases: [string, { url: string } | RegExp][] = [
    ["https://github.com/tektoncd/catalog.git", { url: "https://github.com/tektoncd/catalog.git" }],
    ["https://GitHub.com/tektoncd/catalog.git/", { url: "https://github.com/tektoncd/catalog.git" }],
    [" http://127.0.0.1:8080/tasks.git ", { url: "http://127.0.0.1:8080/tasks.git" }],
    ["https://git.example/scm/x.git?ref=1", { url: "https://git.example/scm/x.git?ref=1" }],
    ["file:///etc", /^file:\/\/ URLs are not allowed/],
    ["FILE:///etc", /^file:\/\/ URLs are not allowed/],
    ["/srv/git/tasks.git", /^local paths are not allowed/],
    ["./tasks.git", /^local paths are not allowed/],
    ["../tasks.git", /^local paths are not allowed/],
    ["~/tasks.git", /^local paths are not allowed/],
    ["tasks.git", /^not a URL/],
    ["git@github.com:tektoncd/catalog.git", /^ssh URLs are not supported/],
    ["ssh://git@github.com/tektoncd/catalog.git", /^ssh URLs are not supported/],
    ["git://github.com/tektoncd/catalog.git", /^scheme git is not supported/],
    ["ext::sh -c touch% /tmp/pwned", /^not a URL|^scheme ext is not supported/],
    ["-uhttps://x", /^must not start with "-"/],
    ["https://user:pass@github.com/x.git", /^must not contain credentials/],
    ["https://token@github.com/x.git", /^must not contain credentials/],
    ["https://github.com/x.git#main", /^must not contain a fragment/],
  ];
  for (const [input, want] of cases) {
    const got = checkUrl(input);
    if (want instanceof RegExp) {
      assert.ok("error" in got && want.test(got.error), `${input}: ${JSON.stringify(got)}`);
    } else assert.deepEqual(got, want, input);
  }
});

function rejects(fn: () => unknown, reason: string, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ResolutionError, String(err));
    assert.equal(err.reason, reason);
    assert.match(err.message, message);
    return true;
  });
}

test("parseRequest fills defaults and classifies", () => {
  const config = parseGitConfig({ "default-url": "https://git.example/tasks.git", "default-revision": "v1" });
  const r = parseRequest({ pathInRepo: "/task.yaml" }, config);
  assert.equal(r.url, "https://git.example/tasks.git");
  assert.deepEqual(r.revision, { kind: "ref", name: "v1" });
  assert.equal(r.revisionText, "v1");
  assert.equal(r.path, "task.yaml");
  assert.equal(r.token, undefined);

  const pinned = parseRequest(
    { url: "https://other.example/x.git", revision: SHA1, pathInRepo: "a.yaml", gitToken: "creds" },
    config,
  );
  assert.deepEqual(pinned.revision, { kind: "commit", sha: SHA1, format: "sha1" });
  assert.deepEqual(pinned.token, { secret: "creds", key: "token" });

  const keyed = parseRequest({ pathInRepo: "a", gitToken: "creds", gitTokenKey: "password" }, config);
  assert.deepEqual(keyed.token, { secret: "creds", key: "password" });
});

test("parseRequest: configKey picks Tekton's <configKey>.* keys", () => {
  const config = parseGitConfig({
    "default-url": "https://a.example/x.git",
    "internal.default-url": "https://git.internal/tasks.git",
    "internal.default-revision": "stable",
  });
  const r = parseRequest({ pathInRepo: "a", configKey: "internal" }, config);
  assert.equal(r.url, "https://git.internal/tasks.git");
  assert.equal(r.revisionText, "stable");
  rejects(
    () => parseRequest({ pathInRepo: "a", configKey: "nope" }, config),
    "InvalidParams",
    /^param "configKey"/,
  );
});

test("parseRequest refusals name the param", () => {
  const config = parseGitConfig({});
  const cases: [Record<string, string>, RegExp][] = [
    [{ pathInRepo: "a" }, /^param "url" is required \(git-resolver-config sets no default-url\)/],
    [{ url: "file:///etc", pathInRepo: "a" }, /^param "url": file:\/\//],
    [{ url: "/etc", pathInRepo: "a" }, /^param "url": local paths/],
    [
      { url: "https://x/y.git", pathInRepo: "a", revision: "--upload-pack=evil" },
      /^param "revision": must not start/,
    ],
    [{ url: "https://x/y.git", pathInRepo: "../a" }, /^param "pathInRepo": must not contain "\.\."/],
    [{ url: "https://x/y.git", pathInRepo: "" }, /^param "pathInRepo": must not be empty/],
    [{ url: "https://x/y.git", pathInRepo: "a", gitTokenKey: "k" }, /^param "gitTokenKey" needs "gitToken"/],
    [
      { url: "https://x/y.git", pathInRepo: "a", gitToken: "Bad_Name" },
      /^param "gitToken": "Bad_Name" is not/,
    ],
    [{ url: "https://x/y.git", pathInRepo: "a", gitToken: "s", gitTokenKey: "a/b" }, /^param "gitTokenKey"/],
    [{ url: "https://x/y.git", org: "tektoncd", pathInRepo: "a" }, /^param "org" needs "repo" \(API mode\)/],
    [{ url: "https://x/y.git", pathInRepo: "a", token: "s" }, /^param "token" needs "repo" \(API mode\)/],
  ];
  for (const [params, want] of cases) rejects(() => parseRequest(params, config), "InvalidParams", want);
});

test("the params schema caps lengths, so a megabyte param never reaches git", () => {
  const v = new ParamsValidator(paramsSchema, validateParams);
  const url = "https://git.example/x.git";
  const MiB = 1024 * 1024;
  assert.match(
    v.check({ url, pathInRepo: "p".repeat(MiB) }) ?? "",
    /param "pathInRepo" must NOT have more than 4096/,
  );
  assert.match(
    v.check({ url, revision: "r".repeat(MiB), pathInRepo: "t" }) ?? "",
    /param "revision" must NOT have more than 1024/,
  );
  assert.match(
    v.check({ url: `${url}/${"a".repeat(MiB)}`, pathInRepo: "t" }) ?? "",
    /param "url" must NOT have more than 4096/,
  );
  assert.equal(v.check({ url, revision: "r".repeat(1024), pathInRepo: "p".repeat(4096) }), undefined);
});
