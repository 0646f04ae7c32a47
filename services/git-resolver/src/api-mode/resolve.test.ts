// API mode end to end through GitResolver against the GitHub and GitLab protocol fixtures
// (@quarry/devcluster/forge-fixtures, real HTTP servers on loopback): params in, the Resolved or
// the ResolutionError out, and where every token went.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ForgeFixture, startForgeFixture } from "@quarry/devcluster/forge-fixtures";
import { type Params, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import type { GitSource } from "../engine/source.ts";
import type { SecretReader } from "../policy/secrets.ts";
import { GitResolver } from "../resolver.ts";

const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\n";
const OPERATOR_TOKEN = "operator-s3cret";
const OWN_TOKEN = "own-s3cret";
const logged: string[] = [];

const ctx = (config: Record<string, string>, namespace = "team-a"): ResolveContext =>
  ({
    signal: AbortSignal.timeout(20_000),
    namespace,
    name: "rr",
    config: Object.freeze({ ...config }),
    span: { setAttribute: () => undefined },
    log: {
      warn: (_f: unknown, msg: string) => logged.push(msg),
      debug: () => undefined,
    },
  }) as unknown as ResolveContext;

const noGit: GitSource = new Proxy({} as GitSource, {
  get: () => () => Promise.reject(new Error("API mode must not use the git engine")),
});

describe("API mode", () => {
  let github: ForgeFixture;
  let gitlab: ForgeFixture;
  let other: ForgeFixture;
  let mainCommit: string;
  let resolver: GitResolver;
  const secrets: Record<string, { value: string; annotations: Record<string, string> }> = {};
  const readSecret: SecretReader = async (ns, name, key) => {
    const s = secrets[`${ns}/${name}/${key}`];
    return s ?? { problem: `Secret ${ns}/${name} not found` };
  };

  before(async () => {
    [github, gitlab, other] = await Promise.all([
      startForgeFixture("github"),
      startForgeFixture("gitlab"),
      startForgeFixture("github"),
    ]);
    mainCommit = github.addRepo("tektoncd/catalog", { "task/hello.yaml": TASK }, { token: OPERATOR_TOKEN });
    gitlab.addRepo("group/sub/catalog", { "task/hello.yaml": TASK }, { token: OPERATOR_TOKEN });
    other.addRepo("tektoncd/catalog", { "task/hello.yaml": TASK });
    secrets["quarry-system/api-token/token"] = { value: OPERATOR_TOKEN, annotations: {} };
    secrets[`team-a/own/token`] = { value: OWN_TOKEN, annotations: { "tekton.dev/git-0": other.baseUrl } };
    secrets[`team-a/unbound/token`] = { value: OWN_TOKEN, annotations: {} };
    resolver = new GitResolver({ source: noGit, readSecret, systemNamespace: "quarry-system" });
  });
  after(() => Promise.all([github, gitlab, other].map((f) => f?.stop())));

  const ghConfig = () => ({
    "scm-type": "github",
    "server-url": github.baseUrl,
    "api-token-secret-name": "api-token",
    "insecure-hosts": "127.0.0.1",
  });
  const resolve = (config: Record<string, string>, params: Params) =>
    resolver.resolve({ pathInRepo: "task/hello.yaml", ...params }, ctx(config));
  const rejects = async (p: Promise<unknown>, reason: string, want: RegExp) => {
    await assert.rejects(p, (err: unknown) => {
      assert.ok(err instanceof ResolutionError, String(err));
      assert.equal(err.reason, reason, err.message);
      assert.match(err.message, want);
      return true;
    });
  };

  test("github: branch → commit first, file at that commit, Tekton's annotations and refSource", async () => {
    const seen = github.requests.length;
    const r = await resolve(ghConfig(), { org: "tektoncd", repo: "catalog", revision: "main" });
    assert.equal(Buffer.from(r.data).toString(), TASK);
    const clone = `${github.baseUrl}/tektoncd/catalog.git`;
    assert.deepEqual(r.refSource, {
      uri: `git+${clone}`,
      digest: { sha1: mainCommit },
      entryPoint: "task/hello.yaml",
    });
    assert.deepEqual(r.annotations, {
      "resolution.tekton.dev/url": clone,
      "resolution.tekton.dev/revision": mainCommit,
      "resolution.tekton.dev/path": "task/hello.yaml",
      "resolution.tekton.dev/content-type": "application/x-yaml",
      "resolution.tekton.dev/org": "tektoncd",
      "resolution.tekton.dev/repo": "catalog",
    });
    const sent = github.requests.slice(seen);
    assert.deepEqual(
      sent.map((q) => q.path),
      [
        "/api/v3/repos/tektoncd/catalog/commits/main",
        `/api/v3/repos/tektoncd/catalog/contents/task/hello.yaml?ref=${mainCommit}`,
        "/api/v3/repos/tektoncd/catalog",
      ],
    );
    assert.ok(sent.every((q) => q.authorization === `Bearer ${OPERATOR_TOKEN}`));
  });

  test("a moved branch: the new commit, read at that commit", async () => {
    const next = github.commit("tektoncd/catalog", "main", { "task/hello.yaml": `${TASK}# v2\n` });
    const r = await resolve(ghConfig(), { org: "tektoncd", repo: "catalog" });
    assert.equal(r.refSource?.digest.sha1, next);
    assert.match(Buffer.from(r.data).toString(), /# v2/);
    github.commit("tektoncd/catalog", "main", { "task/hello.yaml": TASK });
  });

  test("gitlab: project by URL-encoded path, PRIVATE-TOKEN, http_url_to_repo", async () => {
    const seen = gitlab.requests.length;
    const config = {
      "scm-type": "gitlab",
      "server-url": gitlab.baseUrl,
      "api-token-secret-name": "api-token",
      "insecure-hosts": "127.0.0.1",
    };
    const r = await resolve(config, { org: "group/sub", repo: "catalog", revision: "main" });
    assert.equal(Buffer.from(r.data).toString(), TASK);
    assert.equal(r.refSource?.uri, `git+${gitlab.baseUrl}/group/sub/catalog.git`);
    const sent = gitlab.requests.slice(seen);
    assert.match(sent[0]!.path, /^\/api\/v4\/projects\/group%2Fsub%2Fcatalog\/repository\/commits\/main$/);
    assert.match(
      sent[1]!.path,
      /^\/api\/v4\/projects\/group%2Fsub%2Fcatalog\/repository\/files\/task%2Fhello\.yaml\?ref=[0-9a-f]{40}$/,
    );
    assert.ok(sent.every((q) => q.privateToken === OPERATOR_TOKEN && q.authorization === undefined));
  });

  test("the operator's token never goes to a serverURL the request names", async () => {
    await rejects(
      resolve(ghConfig(), { org: "tektoncd", repo: "catalog", serverURL: other.baseUrl }),
      "Forbidden",
      /^param "serverURL": .* is not the server-url in git-resolver-config/,
    );
    await rejects(
      resolve(ghConfig(), { org: "tektoncd", repo: "catalog", scmType: "gitlab" }),
      "Forbidden",
      /^param "scmType"/,
    );
    assert.equal(other.requests.length, 0);
  });

  test("a request's own token goes where it is bound; unbound, refused before anything is sent", async () => {
    const r = await resolve(ghConfig(), {
      org: "tektoncd",
      repo: "catalog",
      serverURL: other.baseUrl,
      token: "own",
    });
    assert.equal(Buffer.from(r.data).toString(), TASK);
    assert.ok(other.requests.every((q) => q.authorization === `Bearer ${OWN_TOKEN}`));
    const seen = other.requests.length;
    await rejects(
      resolve(ghConfig(), { org: "tektoncd", repo: "catalog", serverURL: other.baseUrl, token: "unbound" }),
      "Forbidden",
      /^param "token": Secret team-a\/unbound key "token" cannot be used as an API token/,
    );
    assert.equal(other.requests.length, seen);
  });

  test("not found, wrong token, blocked address", async () => {
    await rejects(
      resolve(ghConfig(), { org: "tektoncd", repo: "nope" }),
      "NotFound",
      /^param "revision": .* not found/,
    );
    await rejects(
      resolve(ghConfig(), { org: "tektoncd", repo: "catalog", pathInRepo: "missing.yaml" }),
      "NotFound",
      /^param "pathInRepo": missing\.yaml at [0-9a-f]{40} of tektoncd\/catalog/,
    );
    await rejects(
      resolve(
        { ...ghConfig(), "blocked-networks": "default, loopback" },
        { org: "tektoncd", repo: "catalog" },
      ),
      "Forbidden",
      /^params "serverURL", "org", "repo": refusing to connect .*blocked-networks/,
    );
    await rejects(
      resolve({ ...ghConfig(), "insecure-hosts": "" }, { org: "tektoncd", repo: "catalog" }),
      "Forbidden",
      /over plain http/,
    );
  });
});
