import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type CredentialBinding,
  checkCredentialBinding,
  matchesUrlPrefix,
  parseCredentialBindings,
} from "./credential-binding.ts";

test("matchesUrlPrefix: scheme, host and port exactly, the path on a segment boundary", () => {
  const cases: [string, string, boolean | undefined][] = [
    ["https://github.com", "https://github.com/org/repo.git", true],
    ["https://github.com/", "https://github.com/org/repo.git", true],
    ["https://GitHub.COM", "https://github.com/org/repo.git", true],
    ["https://github.com:443", "https://github.com/org/repo.git", true],
    ["https://github.com/org", "https://github.com/org/repo.git", true],
    ["https://github.com/org/", "https://github.com/org/repo.git", true],
    ["https://github.com/org/repo.git", "https://github.com/org/repo.git", true],
    ["https://github.com/org", "https://github.com/org", true],
    // not a plain string prefix
    ["https://github.com", "https://github.com.evil.io/org/repo.git", false],
    ["https://github.com/org", "https://github.com/organisation/repo.git", false],
    ["https://github.com/org/repo", "https://github.com/org/repo.git", false],
    ["https://github.com/org", "https://github.com/org/../evil/repo.git", false],
    ["https://github.com/org", "https://github.com/org%2F..%2Fevil", false],
    ["https://github.com/Org", "https://github.com/org/repo.git", false],
    ["https://github.com", "http://github.com/org/repo.git", false],
    ["http://github.com", "https://github.com/org/repo.git", false],
    ["https://github.com", "https://github.com:8443/org/repo.git", false],
    ["https://github.com:8443", "https://github.com/org/repo.git", false],
    ["https://github.com", "https://evil.io/github.com/org", false],
    ["http://127.0.0.1:8080/team", "http://127.0.0.1:8080/team/private.git", true],
    ["http://127.0.0.1:8080/team", "http://127.0.0.2:8080/team/private.git", false],
    // not an http(s) URL prefix: binds nothing
    ["github.com", "https://github.com/org/repo.git", undefined],
    ["ssh://github.com", "https://github.com/org/repo.git", undefined],
    ["https://user:pw@github.com", "https://github.com/org/repo.git", undefined],
    ["https://github.com/org?x=1", "https://github.com/org/repo.git", undefined],
    ["https://github.com/org#x", "https://github.com/org/repo.git", undefined],
    ["", "https://github.com/org/repo.git", undefined],
  ];
  for (const [prefix, url, want] of cases)
    assert.equal(matchesUrlPrefix(prefix, url), want, `${prefix} ~ ${url}`);
});

const meta = (annotations: Record<string, string>, name = "git-creds", namespace = "team-a") => ({
  namespace,
  name,
  annotations,
});
const rules = (yaml: string): CredentialBinding[] => parseCredentialBindings(yaml);

test("checkCredentialBinding: annotations or config, either suffices; neither refuses", () => {
  const url = "https://github.com/org/repo.git";
  const cases: [string, ReturnType<typeof meta>, CredentialBinding[], string | RegExp][] = [
    [
      "Tekton's annotation",
      meta({ "tekton.dev/git-0": "https://github.com" }),
      [],
      "annotation tekton.dev/git-0",
    ],
    [
      "any tekton.dev/git- suffix, as creds-init reads them",
      meta({ "tekton.dev/git-github": "https://github.com/org" }),
      [],
      "annotation tekton.dev/git-github",
    ],
    [
      "a second prefix matches",
      meta({ "tekton.dev/git-0": "https://gitlab.com", "tekton.dev/git-1": "https://github.com/org" }),
      [],
      "annotation tekton.dev/git-1",
    ],
    [
      "Quarry's prefixes",
      meta({ "quarry.dev/credential-urls": "https://gitlab.com/x, https://github.com/org" }),
      [],
      "annotation quarry.dev/credential-urls",
    ],
    [
      "config, exact names",
      meta({}),
      rules("- {namespace: team-a, secret: git-creds, urls: ['https://github\\.com/.*']}"),
      "credential-bindings[0]",
    ],
    [
      "config, wildcards, second rule",
      meta({}),
      rules(
        "- {namespace: team-b, secret: '*', urls: ['.*']}\n- {namespace: '*', secret: git-creds, urls: 'https://github\\.com/org/.*'}",
      ),
      "credential-bindings[1]",
    ],
    [
      "nothing bound",
      meta({}),
      [],
      /no tekton\.dev\/git-\* or quarry\.dev\/credential-urls annotation and no credential-bindings rule names it/,
    ],
    [
      "prefix of another host",
      meta({ "tekton.dev/git-0": "https://github.com.evil.io" }),
      [],
      /none of its URL prefixes https:\/\/github\.com\.evil\.io matches/,
    ],
    [
      "an ssh host binds no https URL",
      meta({ "tekton.dev/git-0": "github.com" }),
      [],
      /ignored: tekton\.dev\/git-0: "github\.com" is not an http\(s\) URL prefix/,
    ],
    [
      "a prefix never matches another path",
      meta({ "quarry.dev/credential-urls": "https://github.com/other" }),
      [],
      /none of its URL prefixes https:\/\/github\.com\/other matches/,
    ],
    [
      "no pattern is compiled: a regular expression is no prefix",
      meta({ "quarry.dev/credential-urls": "(a+)+$" }),
      [],
      /ignored: quarry\.dev\/credential-urls: "\(a\+\)\+\$" is not an http\(s\) URL prefix/,
    ],
    [
      "other annotations do not bind",
      meta({ "tekton.dev/docker-0": "https://github.com", "tekton.dev/git": "https://github.com" }),
      [],
      /no tekton\.dev\/git-\* or/,
    ],
    [
      "another namespace's rule",
      meta({}),
      rules("- {namespace: team-b, secret: git-creds, urls: ['.*']}"),
      /no credential-bindings rule names it/,
    ],
    [
      "another Secret's rule",
      meta({}),
      rules("- {namespace: team-a, secret: other, urls: ['.*']}"),
      /no credential-bindings rule names it/,
    ],
    [
      "a rule for it whose patterns miss",
      meta({}),
      rules("- {namespace: team-a, secret: git-creds, urls: ['https://gitlab\\.com/.*']}"),
      /^Secret team-a\/git-creds is not bound to https:\/\/github\.com\/org\/repo\.git: none of 1 credential-bindings rule\(s\) matches$/,
    ],
  ];
  for (const [name, secret, bindings, want] of cases) {
    const got = checkCredentialBinding(secret, url, bindings);
    if (typeof want === "string") assert.deepEqual(got, { allowed: true, by: want }, name);
    else {
      assert.equal(got.allowed, false, name);
      assert.match((got as { detail: string }).detail, want, name);
    }
  }
});

test("parseCredentialBindings: strict, naming the key", () => {
  assert.deepEqual(parseCredentialBindings(undefined), []);
  assert.deepEqual(parseCredentialBindings("  "), []);
  const [r] = parseCredentialBindings(
    "- namespace: team-a\n  secret: git-creds\n  urls:\n    - https://github\\.com/org/.*\n",
  );
  assert.equal(r?.namespace, "team-a");
  assert.equal(r?.urls[0]?.test("https://github.com/org/x.git"), true);
  assert.equal(r?.urls[0]?.test("https://github.com/org/x.git.evil.io/"), true, "as written");
  assert.equal(r?.urls[0]?.test("https://evil.io/https://github.com/org/x"), false, "anchored");
  const bad: [string, RegExp][] = [
    ["{a: b}", /must be a YAML list/],
    ["[", /not YAML/],
    ["- x", /entry 0: expected a mapping/],
    ["- {namespace: a, secret: b}", /entry 0: urls must be a pattern or a non-empty list/],
    ["- {namespace: a, secret: b, urls: []}", /urls must be a pattern or a non-empty list/],
    ["- {namespace: a, secret: b, urls: [1]}", /urls must be/],
    ["- {namespace: a, secret: b, urls: ['(']}", /invalid regular expression/],
    ["- {secret: b, urls: ['.*']}", /entry 0: namespace must be a name or "\*", got null/],
    ["- {namespace: A_B, secret: b, urls: ['.*']}", /namespace must be a name/],
    ["- {namespace: a, secret: 'x/y', urls: ['.*']}", /secret must be a name/],
    ["- {namespace: a, secret: b, url: ['.*']}", /entry 0: unknown field\(s\) url/],
  ];
  for (const [raw, want] of bad) {
    assert.throws(
      () => parseCredentialBindings(raw),
      (err: Error) => {
        assert.equal(err.name, "ConfigError", raw);
        assert.match(err.message, /credential-bindings/, raw);
        assert.match(err.message, want, raw);
        return true;
      },
    );
  }
});
