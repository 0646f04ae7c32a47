import assert from "node:assert/strict";
import { test } from "node:test";
import { ResolutionError } from "@quarry/resolver-sdk";
import { parseGitConfig } from "../config.ts";
import { checkPolicy } from "./allow-lists.ts";

const config = parseGitConfig({
  "allowed-urls": "https://git\\.example/.*\nhttps://github\\.com/tektoncd/catalog\\.git",
  "allowed-revisions": "main\nv[0-9]+(\\.[0-9]+)*\n[0-9a-f]{40}",
  "namespace-allowed-urls": [
    "team-a: https://git\\.example/team-a/.*",
    "team-b: [https://git\\.example/team-b/.*, https://github\\.com/tektoncd/catalog\\.git]",
    "'*': https://github\\.com/tektoncd/catalog\\.git",
  ].join("\n"),
});

test("checkPolicy", () => {
  const SHA = "0123456789abcdef0123456789abcdef01234567";
  const cases: [string, string, string, RegExp | undefined][] = [
    ["team-a", "https://git.example/team-a/tasks.git", "main", undefined],
    ["team-a", "https://git.example/team-a/tasks.git", "v1.2", undefined],
    ["team-a", "https://git.example/team-a/tasks.git", SHA, undefined],
    ["team-b", "https://github.com/tektoncd/catalog.git", "main", undefined],
    ["other", "https://github.com/tektoncd/catalog.git", "main", undefined],
    [
      "team-a",
      "https://evil.example/tasks.git",
      "main",
      /^param "url": https:\/\/evil\.example\/tasks\.git is not allowed by allowed-urls/,
    ],
    [
      "team-a",
      "https://git.example/team-b/tasks.git",
      "main",
      /^param "url": .* is not allowed for namespace team-a by namespace-allowed-urls/,
    ],
    ["other", "https://git.example/team-a/tasks.git", "main", /not allowed for namespace other/],
    [
      "team-a",
      "https://git.example/team-a/tasks.git",
      "feature",
      /^param "revision": "feature" is not allowed by allowed-revisions/,
    ],
    ["team-a", "https://git.example/team-a/tasks.git", "v1-rc", /^param "revision"/],
  ];
  for (const [ns, url, revisionText, want] of cases) {
    const run = () => checkPolicy({ url, revisionText }, config, ns);
    if (!want) assert.doesNotThrow(run, `${ns} ${url} ${revisionText}`);
    else
      assert.throws(run, (err: unknown) => {
        assert.ok(err instanceof ResolutionError);
        assert.equal(err.reason, "Forbidden");
        assert.match(err.message, want);
        return true;
      });
  }
});

test("without allow-lists everything is allowed", () => {
  assert.doesNotThrow(() =>
    checkPolicy({ url: "https://any/x.git", revisionText: "any" }, parseGitConfig({}), "ns"),
  );
});

test("namespace rules without a * entry refuse namespaces they do not list", () => {
  const c = parseGitConfig({ "namespace-allowed-urls": "team-a: .*" });
  assert.throws(() => checkPolicy({ url: "https://x/y.git", revisionText: "main" }, c, "team-b"), /team-b/);
});

test("link-local (cloud metadata) hosts are refused even where allowed-urls would admit them", () => {
  const open = parseGitConfig({ "allowed-urls": ".*" });
  for (const url of [
    "http://169.254.169.254/latest/meta-data",
    "http://[fe80::1]/x.git",
    "http://metadata.google.internal/computeMetadata/v1",
  ])
    for (const c of [open, parseGitConfig({})])
      assert.throws(
        () => checkPolicy({ url, revisionText: "main" }, c, "ns"),
        (err: unknown) =>
          err instanceof ResolutionError &&
          err.reason === "Forbidden" &&
          /^param "url": .* resolvers never fetch from it$/.test(err.message),
        url,
      );
  assert.doesNotThrow(() =>
    checkPolicy({ url: "http://127.0.0.1:8080/x.git", revisionText: "main" }, parseGitConfig({}), "ns"),
  );
});
