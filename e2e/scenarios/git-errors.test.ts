// Bad git requests fail at once with Quarry's finer reason and a message
// that names the param at fault.
import assert from "node:assert/strict";
import { test } from "node:test";
import { GIT_LABELS, useGitScenario } from "@quarry/harness/git-scenario";
import { createRequest, finished, newRequest, succeeded, waitForRequest } from "@quarry/harness/scenario";

const git = useGitScenario("git-err", {
  config: {
    "allowed-urls": "http://127\\.0\\.0\\.1:[0-9]+/.*",
    "allowed-revisions": "main|feature|v[0-9]+|nope|[0-9a-f]{40}",
  },
});

type Case = [string, (url: string) => Record<string, string>, string, RegExp];
const cases: Case[] = [
  [
    "missing-file",
    (url) => ({ url, pathInRepo: "nope.yaml" }),
    "NotFound",
    /param "pathInRepo": no such file "nope\.yaml"/,
  ],
  [
    "missing-revision",
    (url) => ({ url, revision: "nope", pathInRepo: "task.yaml" }),
    "NotFound",
    /param "revision": no branch, tag or ref named "nope"/,
  ],
  [
    "missing-commit",
    (url) => ({ url, revision: "1".repeat(40), pathInRepo: "task.yaml" }),
    "NotFound",
    /param "revision": commit 1{40} not found/,
  ],
  [
    "missing-repo",
    (url) => ({ url: url.replace("tasks.git", "nope.git"), pathInRepo: "task.yaml" }),
    "NotFound",
    /param "url": repository .*nope\.git not found/,
  ],
  [
    "escaping-symlink",
    (url) => ({ url, pathInRepo: "links/outside.yaml" }),
    "Forbidden",
    /param "pathInRepo": symlink "links\/outside\.yaml" points outside the repository/,
  ],
  [
    "dotdot",
    (url) => ({ url, pathInRepo: "tasks/../../etc/passwd" }),
    "InvalidParams",
    /param "pathInRepo": must not contain "\.\."/,
  ],
  [
    "dash-revision",
    (url) => ({ url, revision: "--upload-pack=touch /tmp/x", pathInRepo: "task.yaml" }),
    "InvalidParams",
    /param "revision": must not start with "-"/,
  ],
  [
    "file-url",
    () => ({ url: "file:///etc", pathInRepo: "passwd" }),
    "InvalidParams",
    /param "url": file:\/\/ URLs are not allowed/,
  ],
  [
    "local-path",
    () => ({ url: "/srv/git/tasks.git", pathInRepo: "task.yaml" }),
    "InvalidParams",
    /param "url": local paths are not allowed/,
  ],
  [
    "not-allowed-url",
    () => ({ url: "https://example.com/x.git", pathInRepo: "task.yaml" }),
    "Forbidden",
    /param "url": .* not allowed by allowed-urls/,
  ],
  [
    "not-allowed-revision",
    (url) => ({ url, revision: "release/1.0", pathInRepo: "task.yaml" }),
    "Forbidden",
    /param "revision": "release\/1\.0" is not allowed/,
  ],
  ["not-tekton", (url) => ({ url, pathInRepo: "config/settings.yaml" }), "UnsupportedKind", /./],
  [
    "too-large",
    (url) => ({ url, pathInRepo: "big/large.yaml" }),
    "TooLarge",
    /param "pathInRepo": "big\/large\.yaml" is over the 1 MiB limit/,
  ],
  [
    "unknown-param",
    (url) => ({ url, pathInRepo: "task.yaml", colour: "red" }),
    "InvalidParams",
    /param "colour" is not supported/,
  ],
  [
    // API mode: the forge's repository goes through allowed-urls too, before any connection
    "api-mode-not-allowed",
    () => ({ repo: "catalog", org: "tektoncd", pathInRepo: "task.yaml" }),
    "Forbidden",
    /params "serverURL", "org", "repo": https:\/\/github\.com\/tektoncd\/catalog is not allowed by allowed-urls/,
  ],
];

for (const [name, params, reason, message] of cases) {
  test(`${name}: ${reason}`, async () => {
    const { scn, url } = git();
    await createRequest(scn.admin, newRequest(scn.namespace, name, GIT_LABELS, params(url)));
    const rr = await waitForRequest(scn, name, finished);
    const c = succeeded(rr)!;
    assert.equal(c.status, "False");
    assert.equal(c.reason, "ResolutionFailed");
    assert.equal(rr.status?.annotations?.["quarry.dev/reason"], reason, c.message);
    assert.match(c.message ?? "", message);
    assert.equal(rr.status?.data, undefined);
  });
}
