// GitResolver end to end against the fixture git server: params in, the
// Resolved (or the ResolutionError the request would show) out.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import {
  BUILD_TASK,
  buildStandardRepo,
  RepoBuilder,
  type StandardRepo,
  TASK_V1,
  TASK_V2,
} from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import {
  forbidden,
  type Params,
  ParamsValidator,
  ResolutionError,
  type ResolveContext,
  type WaitBackoff,
} from "@quarry/resolver-sdk";
import { decideResolution, parseResolverConfig } from "@quarry/resolver-sdk/internal";
import { GitCliSource } from "./engine/git-cli-source.ts";
import { type GitSource, GitSourceError } from "./engine/source.ts";
import { toResolutionError } from "./errors.ts";
import { GitResolver } from "./resolver.ts";

/** What the resolver logged through ctx.log (warn and debug), newest last. */
const logged: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
const ctx = (config: Record<string, string> = {}, namespace = "team-a"): ResolveContext =>
  ({
    signal: AbortSignal.timeout(20_000),
    namespace,
    name: "rr",
    url: undefined,
    config: Object.freeze({ ...config }),
    span: { setAttribute: () => undefined },
    log: {
      warn: (fields: Record<string, unknown>, msg: string) => logged.push({ level: "warn", fields, msg }),
      debug: (fields: Record<string, unknown>, msg: string) => logged.push({ level: "debug", fields, msg }),
    },
  }) as unknown as ResolveContext;
/** The fixture server is plain http on 127.0.0.1: a token may go there only when it is listed. */
const INSECURE = { "insecure-hosts": "127.0.0.1" };

describe("GitResolver", () => {
  let server: GitServer;
  let repo: StandardRepo;
  let url: string;
  let cacheRoot: string;
  let resolver: GitResolver;
  const secrets: Record<string, { data: Record<string, string>; annotations: Record<string, string> }> = {};

  before(async () => {
    server = await startGitServer();
    repo = await buildStandardRepo(server.root);
    url = server.url(repo.name);
    const priv = await RepoBuilder.create(server.root, "private.git");
    priv.write("task.yaml", TASK_V1);
    await priv.commit("private");
    await priv.push();
    priv.dispose();
    server.setAuth("private.git", { token: "tok-a" });
    // bound to the private repository by Tekton's annotation; "unbound-creds" holds the same token, bound nowhere
    secrets["team-a/git-creds"] = {
      data: { token: "tok-a", other: "tok-b", empty: "" },
      annotations: { "tekton.dev/git-0": server.url("private.git") },
    };
    secrets["team-a/unbound-creds"] = { data: { token: "tok-a" }, annotations: {} };
    cacheRoot = mkdtempSync(join(tmpdir(), "quarry-git-resolver-test-"));
    resolver = new GitResolver({
      source: new GitCliSource({ cacheRoot }),
      readSecret: async (ns, name, key) => {
        const s = secrets[`${ns}/${name}`];
        if (!s) return { problem: `Secret ${ns}/${name} not found` };
        const value = s.data[key];
        if (value === undefined) return { problem: `Secret ${ns}/${name} has no key "${key}"` };
        if (value === "") return { problem: `key "${key}" of Secret ${ns}/${name} is empty` };
        return { value, annotations: s.annotations };
      },
    });
  });
  after(async () => {
    repo.builder.dispose();
    await server.stop();
    rmSync(cacheRoot, { recursive: true, force: true });
  });

  test("resolves a branch: data, Tekton's annotations and refSource", async () => {
    const r = await resolver.resolve({ url, revision: "main", pathInRepo: "/task.yaml" }, ctx());
    assert.equal(Buffer.from(r.data).toString(), TASK_V2);
    assert.deepEqual(r.annotations, {
      "resolution.tekton.dev/url": url,
      "resolution.tekton.dev/revision": repo.main,
      "resolution.tekton.dev/path": "task.yaml",
      "resolution.tekton.dev/content-type": "application/x-yaml",
    });
    assert.deepEqual(r.refSource, {
      uri: `git+${url}`,
      digest: { sha1: repo.main },
      entryPoint: "task.yaml",
    });
  });

  test("defaults from config, configKey, tags, SHAs and symlinks", async () => {
    const config = { "default-url": url, "default-revision": "v1", "other.default-revision": "feature" };
    const cases: [Params, string, string][] = [
      [{ pathInRepo: "task.yaml" }, TASK_V1, repo.first],
      [{ pathInRepo: "task.yaml", configKey: "other" }, "echo feature", repo.feature],
      [{ pathInRepo: "task.yaml", revision: "refs/tags/v2" }, TASK_V2, repo.main],
      [{ pathInRepo: "task.yaml", revision: repo.first.toUpperCase() }, TASK_V1, repo.first],
      [{ pathInRepo: "links/inside.yaml", revision: "main" }, BUILD_TASK, repo.main],
    ];
    for (const [params, want, commit] of cases) {
      const r = await resolver.resolve(params, ctx(config));
      assert.ok(Buffer.from(r.data).toString().includes(want), JSON.stringify(params));
      assert.equal(r.annotations?.["resolution.tekton.dev/revision"], commit, JSON.stringify(params));
    }
    const linked = await resolver.resolve({ pathInRepo: "links/inside.yaml", revision: "main" }, ctx(config));
    assert.equal(linked.annotations?.["quarry.dev/git-resolved-path"], "tasks/build/task.yaml");
    assert.equal(linked.refSource?.entryPoint, "links/inside.yaml");
  });

  test("a gitToken from the request's namespace opens a private repository", async () => {
    const priv = server.url("private.git");
    const r = await resolver.resolve(
      { url: priv, pathInRepo: "task.yaml", gitToken: "git-creds" },
      ctx(INSECURE),
    );
    assert.equal(Buffer.from(r.data).toString(), TASK_V1);
    assert.equal(server.log.filter((e) => e.repo === "private.git").at(-1)?.status, 200);
  });

  test("failures: reason and a message naming the param", async () => {
    const priv = server.url("private.git");
    const cases: [Params, Record<string, string>, string, RegExp][] = [
      [
        { url, pathInRepo: "nope.yaml" },
        {},
        "NotFound",
        /^param "pathInRepo": no such file "nope\.yaml" \(commit [0-9a-f]{40} of http/,
      ],
      [
        { url, revision: "nope", pathInRepo: "task.yaml" },
        {},
        "NotFound",
        /^param "revision": no branch, tag or ref named "nope"/,
      ],
      [
        { url: server.url("nope.git"), pathInRepo: "task.yaml" },
        {},
        "NotFound",
        /^param "url": repository .*nope\.git not found/,
      ],
      [
        { url, pathInRepo: "links/outside.yaml" },
        {},
        "Forbidden",
        /^param "pathInRepo": symlink "links\/outside\.yaml" points outside/,
      ],
      [
        { url, pathInRepo: "../etc/passwd" },
        {},
        "InvalidParams",
        /^param "pathInRepo": must not contain "\.\."/,
      ],
      [
        { url, pathInRepo: "task.yaml", revision: "-x" },
        {},
        "InvalidParams",
        /^param "revision": must not start with "-"/,
      ],
      [
        { url: "file:///srv/git/x.git", pathInRepo: "task.yaml" },
        {},
        "InvalidParams",
        /^param "url": file:\/\//,
      ],
      [
        { url, pathInRepo: "big/large.yaml" },
        {},
        "TooLarge",
        /^param "pathInRepo": "big\/large\.yaml" is over the 1 MiB limit/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml" },
        {},
        "Forbidden",
        /^param "url": .* refused the credentials .*name a Secret in "gitToken"/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "git-creds", gitTokenKey: "other" },
        INSECURE,
        "Forbidden",
        /^param "gitToken": .*the token was rejected/,
      ],
      [
        { url, pathInRepo: "task.yaml" },
        { "allowed-urls": "https://github\\.com/.*" },
        "Forbidden",
        /^param "url": .* not allowed by allowed-urls/,
      ],
      [
        { url, pathInRepo: "task.yaml", revision: "feature" },
        { "allowed-revisions": "main" },
        "Forbidden",
        /^param "revision"/,
      ],
      [
        { url, pathInRepo: "task.yaml" },
        { "namespace-allowed-urls": "team-b: .*" },
        "Forbidden",
        /not allowed for namespace team-a/,
      ],
    ];
    for (const [params, config, reason, message] of cases) {
      await assert.rejects(resolver.resolve(params, ctx(config)), (err: unknown) => {
        assert.ok(err instanceof ResolutionError, `${JSON.stringify(params)}: ${String(err)}`);
        assert.equal(err.reason, reason, `${JSON.stringify(params)}: ${err.message}`);
        assert.match(err.message, message);
        return true;
      });
    }
  });

  test("a token goes only where its Secret is bound, never over plain http to an unlisted host, and nothing is sent otherwise", async () => {
    const priv = server.url("private.git");
    const port = new URL(priv).port;
    const unusable = (secret: string, key: string, to: string) =>
      new RegExp(
        `^param "gitToken": Secret team-a/${secret} key "${key}" cannot be used as a git token for ${to.replaceAll(".", "\\.")}: it is missing, empty or unreadable by the git resolver, or not bound to this URL \\(the resolver's log says which\\)$`,
      );
    const plainHttp =
      /^param "url": refusing to send the gitToken to http:\/\/127\.0\.0\.1:\d+\/.* over plain http: use https, or list the host in insecure-hosts in git-resolver-config$/;
    // [params, config, message, what the log says]
    const cases: [Params, Record<string, string>, RegExp, RegExp | undefined][] = [
      [{ url: priv, pathInRepo: "task.yaml", gitToken: "git-creds" }, {}, plainHttp, undefined],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "git-creds" },
        { "insecure-hosts": `127.0.0.1:${Number(port) + 1}, localhost` },
        plainHttp,
        undefined,
      ],
      // the same four-part message whether the Secret is missing, has no such key, an empty one, or is not bound
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "missing" },
        INSECURE,
        unusable("missing", "token", priv),
        /Secret team-a\/missing not found/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "git-creds", gitTokenKey: "nokey" },
        INSECURE,
        unusable("git-creds", "nokey", priv),
        /has no key "nokey"/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "git-creds", gitTokenKey: "empty" },
        INSECURE,
        unusable("git-creds", "empty", priv),
        /is empty/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "unbound-creds" },
        INSECURE,
        unusable("unbound-creds", "token", priv),
        /is not bound to .*no tekton\.dev\/git-\* or quarry\.dev\/credential-urls annotation/,
      ],
      // bound to private.git only: the public repository on the same server does not get it
      [
        { url, pathInRepo: "task.yaml", gitToken: "git-creds" },
        INSECURE,
        unusable("git-creds", "token", url),
        /is not bound to .*its URL prefixes http:\/\/127\.0\.0\.1/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "unbound-creds" },
        { ...INSECURE, "credential-bindings": "- {namespace: team-b, secret: '*', urls: ['.*']}" },
        unusable("unbound-creds", "token", priv),
        /no tekton\.dev\/git-\* or quarry\.dev\/credential-urls annotation and no credential-bindings rule names it/,
      ],
    ];
    for (const [params, config, message, log] of cases) {
      const seen = server.log.length;
      logged.length = 0;
      await assert.rejects(resolver.resolve(params, ctx(config)), (err: unknown) => {
        assert.ok(err instanceof ResolutionError, `${JSON.stringify(params)}: ${String(err)}`);
        assert.equal(err.reason, "Forbidden", `${JSON.stringify(params)}: ${err.message}`);
        assert.match(err.message, message);
        assert.ok(!err.message.includes("tok-a"), "the token is in the message");
        return true;
      });
      assert.equal(server.log.length, seen, `${JSON.stringify(params)}: the git server was asked`);
      if (log) {
        const warn = logged.find((l) => l.level === "warn");
        assert.match(String(warn?.fields.problem), log, JSON.stringify(params));
        assert.ok(!JSON.stringify(logged).includes("tok-a"), "the token is in the log");
      }
    }

    // config binds it instead of the Secret's annotations
    const bound = await resolver.resolve(
      { url: priv, pathInRepo: "task.yaml", gitToken: "unbound-creds" },
      ctx({
        ...INSECURE,
        "credential-bindings": `- {namespace: team-a, secret: unbound-creds, urls: ['${priv.replaceAll(".", "\\.")}']}`,
      }),
    );
    assert.equal(Buffer.from(bound.data).toString(), TASK_V1);
    assert.match(
      String(logged.find((l) => l.msg === "gitToken bound")?.fields.by),
      /^credential-bindings\[0\]$/,
    );
  });

  test("an unreachable server is transient (a plain Error the runtime retries)", async () => {
    await server.down();
    try {
      await assert.rejects(
        resolver.resolve({ url, revision: "feature", pathInRepo: "task.yaml" }, ctx()),
        (err) => {
          assert.ok(!(err instanceof ResolutionError));
          return true;
        },
      );
    } finally {
      await server.up();
    }
  });

  test("isImmutable, validateConfig", () => {
    assert.equal(resolver.isImmutable({ revision: repo.main }), true);
    assert.equal(resolver.isImmutable({ revision: "main" }), false);
    assert.equal(resolver.isImmutable({}), false);
    assert.throws(
      () => resolver.validateConfig({ "fetch-timeout": "soon" }),
      /^ConfigError: fetch-timeout:|fetch-timeout/,
    );
  });
});

/** A GitResolver for what reads only the config: nothing is fetched. */
const configOnly = () =>
  new GitResolver({
    source: {} as GitSource,
    readSecret: async () => ({ problem: "unused" }),
  });

test("timeout: fetch-timeout (the configKey's first), else resolution-timeout when set, else Tekton's 1m", () => {
  const rows: [string, Params, Record<string, string>, number][] = [
    ["nothing set: Tekton's shipped fetch-timeout", {}, {}, 60_000],
    ["resolution-timeout set in the ConfigMap", {}, { "resolution-timeout": "20s" }, 20_000],
    ["an empty resolution-timeout is unset", {}, { "resolution-timeout": " " }, 60_000],
    ["fetch-timeout wins", {}, { "fetch-timeout": "45s", "resolution-timeout": "20s" }, 45_000],
    ["the configKey's", { configKey: "x" }, { "fetch-timeout": "45s", "x.fetch-timeout": "5s" }, 5_000],
    [
      "a configKey without one: the plain key",
      { configKey: "x" },
      { "fetch-timeout": "45s", "x.default-url": "https://a/b" },
      45_000,
    ],
    ["a configKey without one, none set: 1m", { configKey: "x" }, { "x.default-url": "https://a/b" }, 60_000],
    ["configKey default: the plain key", { configKey: "default" }, { "fetch-timeout": "7s" }, 7_000],
    [
      "an unknown configKey: the fallbacks (the request fails later)",
      { configKey: "y" },
      { "resolution-timeout": "9s" },
      9_000,
    ],
  ];
  const resolver = configOnly();
  for (const [what, params, config, want] of rows) assert.equal(resolver.timeout(params, config), want, what);
});

test("retryBackoff: Tekton's backoff-* keys, defaults filling the unset ones; none set: the runtime's", () => {
  const tekton = { durationMs: 2000, factor: 2, jitter: 0.1, steps: 2, capMs: 10_000 };
  const rows: [string, Record<string, string>, WaitBackoff | undefined][] = [
    ["none set", {}, undefined],
    ["one set", { "backoff-steps": "5" }, { ...tekton, steps: 5 }],
    [
      "all set",
      {
        "backoff-duration": "500ms",
        "backoff-factor": "1.5",
        "backoff-jitter": "0",
        "backoff-steps": "3",
        "backoff-cap": "1m",
      },
      { durationMs: 500, factor: 1.5, jitter: 0, steps: 3, capMs: 60_000 },
    ],
    ["backoff-steps 1: no retry", { "backoff-steps": "1" }, { ...tekton, steps: 1 }],
  ];
  const resolver = configOnly();
  for (const [what, config, want] of rows) assert.deepEqual(resolver.retryBackoff(config), want, what);
});

/** The runtime's decision for a request named `name` with `params` under the ConfigMap `data`. */
function decide(data: Record<string, string>, params: Record<string, string>, name = "rr") {
  const resolver = configOnly();
  const rr: ResolutionRequest = {
    apiVersion: "resolution.tekton.dev/v1beta1",
    kind: "ResolutionRequest",
    metadata: { name, namespace: "team-a" },
    spec: { params: Object.entries(params).map(([name, value]) => ({ name, value })) },
  };
  const validator = new ParamsValidator(resolver.paramsSchema, resolver.compiledParams);
  const decision = decideResolution(rr, resolver, validator, parseResolverConfig(data, resolver));
  assert.equal(decision.kind, "resolve", JSON.stringify(decision));
  return decision as Extract<typeof decision, { kind: "resolve" }>;
}

test("default-cache-mode: without a cache param, always caches a branch, auto only a commit id, never nothing", () => {
  const url = "https://example.com/team/repo.git";
  const branch = { url, revision: "main", pathInRepo: "task.yaml" };
  const commit = { ...branch, revision: "0123456789abcdef0123456789abcdef01234567" };
  const api = { repo: "repo", org: "team", revision: "main", pathInRepo: "task.yaml" };
  const rows: [string, Record<string, string>, Record<string, string>, boolean][] = [
    ["always, a branch", { "default-cache-mode": "always" }, branch, true],
    [
      "always, no revision (default-revision)",
      { "default-cache-mode": "always" },
      { url, pathInRepo: "t.yaml" },
      true,
    ],
    ["always, API mode on a branch", { "default-cache-mode": "always" }, api, true],
    ["auto, a branch", { "default-cache-mode": "auto" }, branch, false],
    ["unset (auto), a branch", {}, branch, false],
    ["auto, API mode on a branch", { "default-cache-mode": "auto" }, api, false],
    ["auto, a commit id", { "default-cache-mode": "auto" }, commit, true],
    ["never, a commit id", { "default-cache-mode": "never" }, commit, false],
    [
      "never, but the request's cache param says always",
      { "default-cache-mode": "never" },
      { ...branch, cache: "always" },
      true,
    ],
  ];
  for (const [what, data, params, want] of rows) assert.equal(decide(data, params).useCache, want, what);
  // the identical second request looks up the first one's entry
  const always = { "default-cache-mode": "always" };
  assert.equal(decide(always, branch, "a").cacheKey, decide(always, branch, "b").cacheKey);
});

test("toResolutionError maps every source failure", () => {
  const ctx = { url: "https://g/x.git", commit: "c0ffee", withToken: false };
  const cases: [string, string | undefined, RegExp][] = [
    ["repo-not-found", "NotFound", /^param "url": m$/],
    ["revision-not-found", "NotFound", /^param "revision": m$/],
    ["path-not-found", "NotFound", /^param "pathInRepo": m \(commit c0ffee of https:\/\/g\/x\.git\)$/],
    ["not-a-file", "NotFound", /^param "pathInRepo": m/],
    ["symlink-loop", "NotFound", /^param "pathInRepo": m/],
    ["path-escapes", "Forbidden", /^param "pathInRepo": m/],
    ["file-too-large", "TooLarge", /^param "pathInRepo": m/],
    ["repo-too-large", "TooLarge", /^param "url": m$/],
    ["auth", "Forbidden", /^param "url": m: the repository needs credentials/],
    ["unavailable", undefined, /^m$/],
    ["aborted", undefined, /^m$/],
  ];
  for (const [code, reason, message] of cases) {
    const err = toResolutionError(new GitSourceError(code as GitSourceError["code"], "m"), ctx);
    if (reason) {
      assert.ok(err instanceof ResolutionError, code);
      assert.equal(err.reason, reason, code);
    } else assert.ok(!(err instanceof ResolutionError), code);
    assert.match(err.message, message, code);
  }
  const withToken = toResolutionError(new GitSourceError("auth", "m"), { ...ctx, withToken: true });
  assert.match(withToken.message, /^param "gitToken": m: the token was rejected$/);
  const passthrough = forbidden("x");
  assert.equal(toResolutionError(passthrough, ctx), passthrough);
});
