// API-mode params: defaults from the config, every refusal InvalidParams naming the param.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Params, ResolutionError } from "@quarry/resolver-sdk";
import { parseGitConfig, settingsFor } from "../config.ts";
import { isApiMode, parseApiRequest } from "./params.ts";

const settings = (data: Record<string, string> = {}) => settingsFor(parseGitConfig(data), undefined)!;

test("repo switches to API mode", () => {
  assert.equal(isApiMode({ repo: "catalog" }), true);
  assert.equal(isApiMode({ repo: "" }), false);
  assert.equal(isApiMode({ url: "https://x/y.git" }), false);
});

test("defaults: github at github.com, default-org, default-revision; config overrides per configKey", () => {
  const r = parseApiRequest(
    { repo: "catalog", pathInRepo: "/task/a.yaml" },
    settings({ "default-org": "tektoncd" }),
  );
  assert.equal(r.scmType, "github");
  assert.equal(r.serverUrl, "https://github.com");
  assert.equal(r.requestServerUrl, undefined);
  assert.equal(r.org, "tektoncd");
  assert.equal(r.revisionText, "main");
  assert.equal(r.path, "task/a.yaml");
  assert.equal(r.repoUrl, "https://github.com/tektoncd/catalog");
  assert.equal(r.token, undefined);

  const config = parseGitConfig({
    "scm-type": "gitlab",
    "team.scm-type": "gitea",
    "team.server-url": "https://gitea.corp/",
  });
  const team = parseApiRequest({ repo: "r", org: "o", pathInRepo: "a" }, settingsFor(config, "team")!);
  assert.equal(team.scmType, "gitea");
  assert.equal(team.serverUrl, "https://gitea.corp");
  const base = parseApiRequest({ repo: "r", org: "o", pathInRepo: "a" }, settingsFor(config, undefined)!);
  assert.equal(base.serverUrl, "https://gitlab.com");

  const own = parseApiRequest(
    {
      repo: "r",
      org: "group/sub",
      pathInRepo: "a",
      scmType: "GitLab",
      serverURL: "https://gl.corp/",
      token: "t",
      revision: "v1",
    },
    settings(),
  );
  assert.deepEqual(
    [own.scmType, own.serverUrl, own.requestServerUrl, own.org],
    ["gitlab", "https://gl.corp", "https://gl.corp", "group/sub"],
  );
  assert.deepEqual(own.token, { secret: "t", key: "token" });
});

test("refusals name the param", () => {
  const cases: [Params, RegExp][] = [
    [
      { repo: "r", org: "o", url: "https://x/y.git", pathInRepo: "a" },
      /^params "url" and "repo" cannot both be set/,
    ],
    [{ repo: "r", pathInRepo: "a" }, /^param "org" is required with "repo"/],
    [{ repo: "r/x", org: "o", pathInRepo: "a" }, /^param "repo": "r\/x" is not a repository name/],
    [{ repo: "..", org: "o", pathInRepo: "a" }, /^param "repo"/],
    [{ repo: "r", org: "o/../x", pathInRepo: "a" }, /^param "org"/],
    [
      { repo: "r", org: "o", pathInRepo: "a", scmType: "bitbucket" },
      /^param "scmType": "bitbucket" is not supported/,
    ],
    [
      { repo: "r", org: "o", pathInRepo: "a", scmType: "gitea" },
      /^param "serverURL" is required for scmType gitea/,
    ],
    [
      { repo: "r", org: "o", pathInRepo: "a", serverURL: "file:///etc" },
      /^param "serverURL": must be an http\(s\) URL/,
    ],
    [
      { repo: "r", org: "o", pathInRepo: "a", serverURL: "https://u:p@h" },
      /^param "serverURL": must not contain credentials/,
    ],
    [{ repo: "r", org: "o", pathInRepo: "a", revision: "--upload-pack=x" }, /^param "revision"/],
    [{ repo: "r", org: "o", pathInRepo: "../a" }, /^param "pathInRepo"/],
    [{ repo: "r", org: "o", pathInRepo: "a", tokenKey: "k" }, /^param "tokenKey" needs "token"/],
    [{ repo: "r", org: "o", pathInRepo: "a", token: "Bad_Name" }, /^param "token"/],
    [{ repo: "r", org: "o", pathInRepo: "a", gitToken: "s" }, /^param "gitToken" is for url mode/],
  ];
  for (const [params, want] of cases) {
    assert.throws(
      () => parseApiRequest(params, settings()),
      (err: unknown) =>
        err instanceof ResolutionError && err.reason === "InvalidParams" && want.test(err.message),
      JSON.stringify(params),
    );
  }
  assert.throws(
    () => parseApiRequest({ repo: "r", org: "o", pathInRepo: "a" }, settings({ "scm-type": "bitbucket" })),
    /^ResolutionError: scm-type in git-resolver-config: "bitbucket" is not supported/,
  );
});
