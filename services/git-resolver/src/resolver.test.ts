// GitResolver end to end against the fixture git server: params in, the
// Resolved (or the ResolutionError the request would show) out.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  BUILD_TASK,
  buildStandardRepo,
  RepoBuilder,
  type StandardRepo,
  TASK_V1,
  TASK_V2,
} from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { forbidden, notFound, type Params, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import { toResolutionError } from "./errors.ts";
import { GitCliSource } from "./git-cli-source.ts";
import { GitResolver } from "./resolver.ts";
import { GitSourceError } from "./source.ts";

const ctx = (config: Record<string, string> = {}, namespace = "team-a"): ResolveContext =>
  ({
    signal: AbortSignal.timeout(20_000),
    namespace,
    name: "rr",
    url: undefined,
    config: Object.freeze({ ...config }),
    span: { setAttribute: () => undefined },
  }) as unknown as ResolveContext;

describe("GitResolver", () => {
  let server: GitServer;
  let repo: StandardRepo;
  let url: string;
  let cacheRoot: string;
  let resolver: GitResolver;
  const secrets: Record<string, Record<string, string>> = {
    "team-a/git-creds": { token: "tok-a", other: "tok-b" },
  };

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
    cacheRoot = mkdtempSync(join(tmpdir(), "quarry-git-resolver-test-"));
    resolver = new GitResolver({
      source: new GitCliSource({ cacheRoot }),
      readSecret: async (ns, name, key) => {
        const s = secrets[`${ns}/${name}`];
        if (!s) throw notFound(`param "gitToken": Secret ${ns}/${name} not found`);
        const v = s[key];
        if (v === undefined) throw notFound(`param "gitTokenKey": Secret ${ns}/${name} has no key "${key}"`);
        return v;
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
    const r = await resolver.resolve({ url: priv, pathInRepo: "task.yaml", gitToken: "git-creds" }, ctx());
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
        {},
        "Forbidden",
        /^param "gitToken": .*the token was rejected/,
      ],
      [
        { url: priv, pathInRepo: "task.yaml", gitToken: "missing" },
        {},
        "NotFound",
        /^param "gitToken": Secret team-a\/missing not found/,
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

  test("isImmutable, timeout, validateConfig", () => {
    assert.equal(resolver.isImmutable({ revision: repo.main }), true);
    assert.equal(resolver.isImmutable({ revision: "main" }), false);
    assert.equal(resolver.isImmutable({}), false);
    assert.equal(resolver.timeout({}, {}), 30_000);
    assert.equal(resolver.timeout({}, { "resolution-timeout": "20s" }), 20_000);
    assert.equal(resolver.timeout({}, { "fetch-timeout": "45s", "resolution-timeout": "20s" }), 45_000);
    assert.equal(
      resolver.timeout({ configKey: "x" }, { "fetch-timeout": "45s", "x.fetch-timeout": "5s" }),
      5_000,
    );
    assert.throws(
      () => resolver.validateConfig({ "fetch-timeout": "soon" }),
      /^ConfigError: fetch-timeout:|fetch-timeout/,
    );
  });
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
