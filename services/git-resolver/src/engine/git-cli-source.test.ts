// The engine against a real smart-HTTP git server (git http-backend), with
// the server's access log as the witness of what went over the wire.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  BUILD_TASK,
  buildStandardRepo,
  RepoBuilder,
  type StandardRepo,
  TASK_FEATURE,
  TASK_V1,
  TASK_V2,
} from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { GitCliSource } from "./git-cli-source.ts";
import { GitSourceError, type SourceRequest } from "./source.ts";

const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const req = (extra: Partial<SourceRequest> = {}): SourceRequest => ({
  auth: undefined,
  signal: AbortSignal.timeout(20_000),
  ...extra,
});
const ref = (name: string) => ({ kind: "ref", name }) as const;

async function rejectsWith(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof GitSourceError, String(err));
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe("GitCliSource against a real git server", () => {
  let server: GitServer;
  let repo: StandardRepo;
  let url: string;
  let privateUrl: string;
  let privateSha: string;
  let cacheRoot: string;
  let source: GitCliSource;

  before(async () => {
    server = await startGitServer();
    repo = await buildStandardRepo(server.root);
    url = server.url(repo.name);
    const priv = await RepoBuilder.create(server.root, "team/private.git");
    priv.write("task.yaml", TASK_V1);
    privateSha = await priv.commit("private");
    await priv.push();
    priv.dispose();
    server.setAuth("team/private.git", { token: "s3cret-token-value" });
    privateUrl = server.url("team/private.git");
    cacheRoot = mkdtempSync(join(tmpdir(), "quarry-git-cache-test-"));
    source = new GitCliSource({ cacheRoot });
  });
  after(async () => {
    repo.builder.dispose();
    await server.stop();
    rmSync(cacheRoot, { recursive: true, force: true });
  });

  test("resolves branches, tags (lightweight and annotated) and full refs", async () => {
    const cases: [string, string][] = [
      ["main", repo.main],
      ["feature", repo.feature],
      ["release/1.0", repo.first],
      ["v1", repo.first],
      ["v2", repo.main],
      ["refs/tags/v1", repo.first],
      ["refs/heads/feature", repo.feature],
      ["heads/feature", repo.feature],
      ["same", repo.first],
      ["refs/heads/same", repo.feature],
      ["HEAD", repo.main],
    ];
    for (const [name, want] of cases)
      assert.equal(await source.resolveRevision(url, ref(name), req()), want, name);
  });

  test("missing revision, missing repository", async () => {
    await rejectsWith(source.resolveRevision(url, ref("nope"), req()), "revision-not-found", /"nope"/);
    await rejectsWith(
      source.resolveRevision(url, ref(repo.main.slice(0, 10)), req()),
      "revision-not-found",
      /abbreviated commit ids are not supported/,
    );
    await rejectsWith(source.resolveRevision(server.url("nope.git"), ref("main"), req()), "repo-not-found");
    await rejectsWith(
      source.readFile(server.url("nope.git"), repo.main, "task.yaml", req()),
      "repo-not-found",
    );
    const unknown = "1".repeat(40);
    await rejectsWith(
      source.readFile(url, unknown, "task.yaml", req()),
      "revision-not-found",
      /commit 1{40} not found/,
    );
  });

  test("reads files by commit: top level, nested, per branch", async () => {
    assert.equal(text((await source.readFile(url, repo.main, "task.yaml", req())).bytes), TASK_V2);
    assert.equal(text((await source.readFile(url, repo.first, "task.yaml", req())).bytes), TASK_V1);
    assert.equal(text((await source.readFile(url, repo.feature, "task.yaml", req())).bytes), TASK_FEATURE);
    const nested = await source.readFile(url, repo.main, "tasks/build/task.yaml", req());
    assert.equal(text(nested.bytes), BUILD_TASK);
    assert.equal(nested.resolvedPath, "tasks/build/task.yaml");
  });

  test("symlinks: followed inside the repository, refused when they leave it", async () => {
    const inside = await source.readFile(url, repo.main, "links/inside.yaml", req());
    assert.equal(text(inside.bytes), BUILD_TASK);
    assert.equal(inside.resolvedPath, "tasks/build/task.yaml");
    assert.equal(
      text((await source.readFile(url, repo.main, "links/dir/build/task.yaml", req())).bytes),
      BUILD_TASK,
    );
    await rejectsWith(source.readFile(url, repo.main, "links/outside.yaml", req()), "path-escapes");
    await rejectsWith(source.readFile(url, repo.main, "links/absolute.yaml", req()), "path-escapes");
    await rejectsWith(source.readFile(url, repo.main, "links/loop-a", req()), "symlink-loop");
    await rejectsWith(source.readFile(url, repo.main, "links/dangling.yaml", req()), "path-not-found");
  });

  test("missing file, directory, file over 1 MiB", async () => {
    await rejectsWith(source.readFile(url, repo.main, "nope.yaml", req()), "path-not-found", /"nope\.yaml"/);
    await rejectsWith(source.readFile(url, repo.main, "tasks", req()), "not-a-file", /is a directory/);
    await rejectsWith(source.readFile(url, repo.main, "big/large.yaml", req()), "file-too-large", /1 MiB/);
  });

  test("credentials: none or a wrong token is refused, the right token reads; the token never shows", async () => {
    await rejectsWith(source.resolveRevision(privateUrl, ref("main"), req()), "auth");
    await rejectsWith(source.readFile(privateUrl, privateSha, "task.yaml", req()), "auth");
    const wrong = { username: "git", token: "wrong-token-value" };
    await assert.rejects(
      source.resolveRevision(privateUrl, ref("main"), req({ auth: wrong })),
      (err: Error) => {
        assert.equal((err as GitSourceError).code, "auth");
        assert.doesNotMatch(err.message, /wrong-token-value/);
        return true;
      },
    );
    const auth = { username: "git", token: "s3cret-token-value" };
    assert.equal(await source.resolveRevision(privateUrl, ref("main"), req({ auth })), privateSha);
    assert.equal(
      text((await source.readFile(privateUrl, privateSha, "task.yaml", req({ auth }))).bytes),
      TASK_V1,
    );
    // another tenant without the token gets nothing from the cache
    await rejectsWith(source.readFile(privateUrl, privateSha, "task.yaml", req()), "auth");
    await rejectsWith(source.readFile(privateUrl, privateSha, "task.yaml", req({ auth: wrong })), "auth");
    const last = server.log.filter((e) => e.repo === "team/private.git" && e.status === 200).at(-1);
    assert.equal(last?.user, "git");
  });

  test("the second read of a commit does not fetch; the same file again does not touch the server", async () => {
    const fresh = new GitCliSource({ cacheRoot: mkdtempSync(join(tmpdir(), "quarry-git-cache-test-")) });
    const commits = () => server.fetches(repo.name).length;
    const before = commits();
    await fresh.readFile(url, repo.first, "task.yaml", req());
    assert.equal(fresh.stats.fetches, 1);
    const afterFirst = commits();
    assert.equal(afterFirst - before, 2, "one fetch for the commit's trees, one for the blob");

    const logged = server.log.length;
    await fresh.readFile(url, repo.first, "task.yaml", req());
    assert.equal(server.log.length, logged, "no request at all");
    assert.equal(fresh.stats.memoryHits, 1);

    await fresh.readFile(url, repo.first, "tasks/build/task.yaml", req());
    assert.equal(fresh.stats.fetches, 1, "no second commit fetch");
    assert.equal(commits() - afterFirst, 1, "only the new blob");

    // a restarted resolver (same cache root): an access check, no fetch at all
    const restarted = new GitCliSource({ cacheRoot: fresh.cache.root });
    const n = commits();
    const again = await restarted.readFile(url, repo.first, "tasks/build/task.yaml", req());
    assert.equal(text(again.bytes), BUILD_TASK);
    assert.equal(commits(), n);
    assert.equal(restarted.stats.fetches, 0);
    assert.equal(restarted.stats.accessChecks, 1);
    rmSync(fresh.cache.root, { recursive: true, force: true });
  });

  test("a new commit is fetched once, however many requests ask at the same time", async () => {
    repo.builder.write("task.yaml", "apiVersion: tekton.dev/v1\nkind: Task\nmetadata: {name: v3}\n");
    const v3 = await repo.builder.commit("third");
    await repo.builder.push();
    assert.equal(await source.resolveRevision(url, ref("main"), req()), v3);
    const fetches = source.stats.fetches;
    const reads = await Promise.all(
      Array.from({ length: 12 }, () => source.readFile(url, v3, "task.yaml", req())),
    );
    assert.equal(source.stats.fetches - fetches, 1);
    for (const r of reads) assert.match(text(r.bytes), /name: v3/);
  });

  test("server down: a named revision fails as unavailable, a cached commit is still served", async () => {
    await source.readFile(url, repo.main, "pipelines/ci/pipeline.yaml", req());
    const cold = new GitCliSource({ cacheRoot: source.cache.root, accessTtlMs: 0 });
    await cold.readFile(url, repo.main, "pipelines/ci/pipeline.yaml", req());
    await server.down();
    try {
      await rejectsWith(source.resolveRevision(url, ref("main"), req()), "unavailable");
      // access was proven before (then expired): the cache still answers
      const r = await cold.readFile(url, repo.main, "pipelines/ci/pipeline.yaml", req());
      assert.match(text(r.bytes), /kind: Pipeline/);
      // never proven: refused while the server cannot say
      const stranger = new GitCliSource({ cacheRoot: source.cache.root });
      await rejectsWith(stranger.readFile(url, repo.main, "task.yaml", req()), "unavailable");
    } finally {
      await server.up();
    }
  });

  test("an abort stops the git work at once", async () => {
    const slow = new GitCliSource({ cacheRoot: mkdtempSync(join(tmpdir(), "quarry-git-cache-test-")) });
    server.setLatency(3000);
    try {
      const started = performance.now();
      await rejectsWith(
        slow.readFile(url, repo.feature, "task.yaml", req({ signal: AbortSignal.timeout(150) })),
        "aborted",
      );
      assert.ok(performance.now() - started < 2000);
    } finally {
      server.setLatency(0);
      rmSync(slow.cache.root, { recursive: true, force: true });
    }
  });

  test("max repository size: an oversized repository is refused and dropped", async () => {
    const small = new GitCliSource({ cacheRoot: mkdtempSync(join(tmpdir(), "quarry-git-cache-test-")) });
    await rejectsWith(
      small.readFile(url, repo.main, "task.yaml", req({ maxRepositoryBytes: 2048 })),
      "repo-too-large",
      /max-repository-size \(2 KiB\)/,
    );
    assert.equal(small.cache.repositories(), 0);
    rmSync(small.cache.root, { recursive: true, force: true });
  });

  test("eviction removes the least recently used repository first, never one in use", async () => {
    let clock = 1_000_000;
    const lru = new GitCliSource({
      cacheRoot: mkdtempSync(join(tmpdir(), "quarry-git-cache-test-")),
      now: () => clock,
      maxCacheBytes: 0,
    });
    const other = await RepoBuilder.create(server.root, "other.git");
    other.write("task.yaml", TASK_V1);
    const otherSha = await other.commit("one");
    await other.push();
    other.dispose();
    await lru.readFile(url, repo.main, "task.yaml", req());
    clock += 1000;
    await lru.readFile(server.url("other.git"), otherSha, "task.yaml", req());
    assert.equal(lru.cache.repositories(), 2);
    const dirs = await Promise.all([
      lru.cache.acquire(url, "sha1", AbortSignal.timeout(1000)),
      lru.cache.acquire(server.url("other.git"), "sha1", AbortSignal.timeout(1000)),
    ]);
    dirs[1].release();
    // budget of one byte: both must go, but the first is in use
    assert.equal(await lru.cache.evict(1), 1);
    assert.equal(existsSync(dirs[0].dir), true);
    assert.equal(existsSync(dirs[1].dir), false);
    dirs[0].release();
    assert.equal(await lru.cache.evict(1), 1);
    assert.equal(existsSync(dirs[0].dir), false);
    assert.equal(lru.stats.evictions, 2);
    rmSync(lru.cache.root, { recursive: true, force: true });
  });

  test("a burst: one ref lookup is one HTTP request and concurrent ones share it; missing blobs come in batches", async () => {
    const b = await RepoBuilder.create(server.root, "burst.git");
    const files = Array.from({ length: 40 }, (_, i) => `tasks/t-${i}.yaml`);
    for (const f of files) b.write(f, `${TASK_V1}# ${f}\n`);
    const sha = await b.commit("many");
    await b.push();
    b.dispose();
    const u = server.url("burst.git");
    const fresh = new GitCliSource({ cacheRoot: mkdtempSync(join(tmpdir(), "quarry-git-cache-test-")) });
    const requests = () => server.log.filter((e) => e.repo === "burst.git").length;
    // first lookup: the capability advertisement once, then the ls-refs
    assert.equal(await fresh.resolveRevision(u, ref("main"), req()), sha);
    let n = requests();
    assert.equal(await fresh.resolveRevision(u, ref("main"), req()), sha);
    assert.equal(requests() - n, 1, "a known server: one POST per lookup");
    n = requests();
    const commits = await Promise.all(files.map(() => fresh.resolveRevision(u, ref("main"), req())));
    for (const c of commits) assert.equal(c, sha);
    assert.equal(requests() - n, 1, "40 concurrent lookups of one branch share one request");
    // another tenant (scope) never shares a lookup
    n = requests();
    await Promise.all([
      fresh.resolveRevision(u, ref("main"), req({ scope: "tenant-a" })),
      fresh.resolveRevision(u, ref("main"), req({ scope: "tenant-b" })),
    ]);
    assert.equal(requests() - n, 2);

    const fetchesBefore = server.fetches("burst.git").length;
    const reads = await Promise.all(files.map((f) => fresh.readFile(u, sha, f, req())));
    for (const [i, f] of files.entries())
      assert.match(text(reads[i]?.bytes ?? new Uint8Array()), new RegExp(f));
    assert.equal(fresh.stats.fetches, 1, "one fetch of the commit's trees");
    assert.ok(fresh.stats.blobFetches <= 3, `40 blobs in ${fresh.stats.blobFetches} fetches`);
    assert.equal(fresh.stats.blobsFetched, 40);
    assert.equal(server.fetches("burst.git").length - fetchesBefore, 1 + fresh.stats.blobFetches);
    rmSync(fresh.cache.root, { recursive: true, force: true });
  });

  test("past the pack count limit the repository is repacked, and every file still reads", async () => {
    const fresh = new GitCliSource({
      cacheRoot: mkdtempSync(join(tmpdir(), "quarry-git-cache-test-")),
      repackPackCount: 2,
      blobBatchWindowMs: 0,
    });
    const paths = [
      "task.yaml",
      "tasks/build/task.yaml",
      "pipelines/ci/pipeline.yaml",
      "config/settings.yaml",
    ];
    for (const p of paths) await fresh.readFile(url, repo.main, p, req());
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(fresh.stats.repacks >= 1, "repacked");
    const again = new GitCliSource({ cacheRoot: fresh.cache.root });
    for (const p of paths) assert.ok((await again.readFile(url, repo.main, p, req())).bytes.length > 0);
    assert.equal(again.stats.blobFetches, 0, "nothing lost by the repack");
    rmSync(fresh.cache.root, { recursive: true, force: true });
  });

  test("sha256 repositories: refs (protocol v1 fallback) and files", async () => {
    const r = await RepoBuilder.create(server.root, "sha256.git", { objectFormat: "sha256" });
    r.write("tasks/t.yaml", TASK_V1);
    const sha = await r.commit("one");
    await r.tag("v1", { message: "annotated" });
    await r.push();
    r.dispose();
    const u = server.url("sha256.git");
    assert.equal(await source.resolveRevision(u, ref("main"), req()), sha);
    assert.equal(await source.resolveRevision(u, ref("v1"), req()), sha);
    assert.equal(text((await source.readFile(u, sha, "tasks/t.yaml", req())).bytes), TASK_V1);
  });
});
