// The git fixtures themselves: the server speaks smart HTTP (v2, partial
// clone, fetch by SHA), enforces basic auth, logs requests and can go down.
// Needs no control plane: node --test e2e/scenarios/git-fixtures.test.ts (also runs with the e2e suite).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  buildStandardRepo,
  git,
  RepoBuilder,
  type StandardRepo,
  TASK_V2,
} from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";

describe("git fixtures", () => {
  let server: GitServer;
  let repo: StandardRepo;
  const scratch = mkdtempSync(join(tmpdir(), "quarry-git-fixture-test-"));

  before(async () => {
    server = await startGitServer();
    repo = await buildStandardRepo(server.root);
  });
  after(async () => {
    repo.builder.dispose();
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("ls-remote lists branches, tags and the peeled annotated tag", async () => {
    const out = await git(["ls-remote", server.url(repo.name)]);
    const refs = new Map(out.split("\n").map((l) => l.split("\t").reverse() as [string, string]));
    assert.equal(refs.get("refs/heads/main"), repo.main);
    assert.equal(refs.get("refs/heads/feature"), repo.feature);
    assert.equal(refs.get("refs/heads/release/1.0"), repo.first);
    assert.equal(refs.get("refs/tags/v1"), repo.first);
    assert.equal(refs.get("refs/tags/v2"), repo.v2TagObject);
    assert.equal(refs.get("refs/tags/v2^{}"), repo.main);
  });

  test("a blob-filtered shallow fetch by SHA gets trees but no blobs, and the log shows it", async () => {
    const dir = join(scratch, "partial.git");
    await git(["init", "--quiet", "--bare", dir]);
    const before = server.fetches(repo.name).length;
    await git([
      "-C",
      dir,
      "fetch",
      "--quiet",
      "--depth=1",
      "--filter=blob:none",
      server.url(repo.name),
      repo.first,
    ]);
    assert.equal(server.fetches(repo.name).length, before + 1);
    const tree = await git(["-C", dir, "ls-tree", "-r", repo.first]);
    assert.match(tree, /tasks\/build\/task\.yaml/);
    const missing = await git(["-C", dir, "rev-list", "--objects", "--missing=print", repo.first]);
    assert.match(missing, /^\?[0-9a-f]{40}$/m, "blobs are left out");
  });

  test("a full clone checks out symlinks as written", async () => {
    const dir = join(scratch, "full");
    await git(["clone", "--quiet", server.url(repo.name), dir]);
    assert.equal(readFileSync(join(dir, "task.yaml"), "utf8"), TASK_V2);
    assert.equal(await git(["-C", dir, "cat-file", "-p", "HEAD:links/outside.yaml"]), "../../outside.yaml");
    assert.equal(
      (await git(["-C", dir, "cat-file", "-s", "HEAD:big/large.yaml"])).trim(),
      String(repo.bigBytes),
    );
  });

  test("basic auth per repository: 401 without or with a wrong token, 200 with the right one", async () => {
    const priv = await RepoBuilder.create(server.root, "team/private.git");
    priv.write("task.yaml", "secret: true\n");
    const sha = await priv.commit("private");
    await priv.push();
    priv.dispose();
    server.setAuth("team/private.git", { token: "s3cret" });
    const url = server.url("team/private.git");
    await assert.rejects(git(["ls-remote", url]), /terminal prompts disabled|Authentication failed/);
    const header = (token: string) =>
      `http.extraHeader=Authorization: Basic ${Buffer.from(`git:${token}`).toString("base64")}`;
    // git answers a rejected header by asking for a username, which the hermetic env refuses.
    await assert.rejects(git(["-c", header("wrong"), "ls-remote", url]), /terminal prompts disabled/);
    assert.match(await git(["-c", header("s3cret"), "ls-remote", url, "main"]), new RegExp(sha));
    const last = server.log.at(-1)!;
    assert.equal(last.repo, "team/private.git");
    assert.equal(last.status, 200);
    assert.equal(last.user, "git");
    assert.equal(
      server.log.filter((e) => e.repo === "team/private.git" && e.status === 401).length >= 2,
      true,
    );
  });

  test("down closes the port, up serves again on the same port", async () => {
    await server.down();
    await assert.rejects(git(["ls-remote", server.url(repo.name)]), /Failed to connect|Connection refused/);
    await server.up();
    assert.match(await git(["ls-remote", server.url(repo.name), "main"]), new RegExp(repo.main));
  });

  test("an injected failure status answers every request", async () => {
    server.setFailure(503);
    await assert.rejects(git(["ls-remote", server.url(repo.name)]), /503/);
    server.setFailure(undefined);
  });

  test("large history: fast-import appends commits and a sized tree", async () => {
    const big = await RepoBuilder.create(server.root, "history.git");
    const tip = await big.addHistory({ commits: 50, files: 30, fileBytes: 2048, filesPerCommit: 2 });
    await big.push();
    big.dispose();
    assert.equal(
      await git(["--git-dir", join(server.root, "history.git"), "rev-list", "--count", tip]),
      "50",
    );
    const files = await git([
      "--git-dir",
      join(server.root, "history.git"),
      "ls-tree",
      "-r",
      "--name-only",
      tip,
    ]);
    assert.equal(files.split("\n").length, 30);
  });

  test("sha256 repositories are served too", async () => {
    const r = await RepoBuilder.create(server.root, "sha256.git", { objectFormat: "sha256" });
    r.write("task.yaml", "a: b\n");
    const sha = await r.commit("one");
    await r.push();
    r.dispose();
    assert.match(sha, /^[0-9a-f]{64}$/);
    assert.match(await git(["ls-remote", server.url("sha256.git"), "main"]), new RegExp(sha));
  });
});
