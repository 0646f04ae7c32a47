// The git resolver's egress policy against real servers on loopback: a git
// server on 127.0.0.2, a capture server on 127.0.0.1 (blocked by the config
// here) and one on 127.0.0.3 (another origin). Ref discovery and the git
// binary both refuse a blocked address and every redirect, and the capture
// servers' connection counts prove nothing was sent.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { buildStandardRepo, type StandardRepo } from "@quarry/devcluster/git-repos";
import { type GitServer, startGitServer } from "@quarry/devcluster/git-server";
import { parseBlockedNetworks } from "@quarry/resolver-sdk";
import { pinnedResolve } from "./git/git-pin.ts";
import { remoteEnv, runGit } from "./git/git-process.ts";
import { GitCliSource } from "./git-cli-source.ts";
import { RefDiscovery } from "./refs/ref-discovery.ts";
import { GitSourceError, type SourceRequest } from "./source.ts";

const blockedNetworks = parseBlockedNetworks("blocked-networks", "default, 127.0.0.1/32");
const req = (): SourceRequest => ({
  auth: { username: "git", token: "never-sent-token" },
  signal: AbortSignal.timeout(20_000),
  blockedNetworks,
});

interface Capture {
  server: Server;
  port: number;
  connections: number;
}

async function capture(address: string, answer?: (path: string) => [number, Record<string, string>]) {
  const c: Capture = { server: createServer(), port: 0, connections: 0 };
  c.server.on("connection", () => c.connections++);
  c.server.on("request", (q, r) => {
    const [status, headers] = answer?.(q.url ?? "") ?? [200, {}];
    r.writeHead(status, headers).end();
  });
  await new Promise<void>((r) => c.server.listen(0, address, r));
  c.port = (c.server.address() as AddressInfo).port;
  return c;
}

const refused = (code: string, re: RegExp) => (err: unknown) => {
  assert.ok(err instanceof GitSourceError, String(err));
  assert.equal(err.code, code, err.message);
  assert.match(err.message, re);
  assert.ok(!err.message.includes("never-sent-token"));
  return true;
};

describe("git egress: blocked addresses and redirects", () => {
  let server: GitServer;
  let repo: StandardRepo;
  let blocked: Capture;
  let other: Capture;
  let redirector: Capture;
  let cacheRoot: string;

  before(async () => {
    server = await startGitServer({ address: "127.0.0.2" });
    repo = await buildStandardRepo(server.root);
    blocked = await capture("127.0.0.1");
    other = await capture("127.0.0.3");
    redirector = await capture("127.0.0.2", (path) =>
      path.startsWith("/same/")
        ? [302, { location: "/moved.git/info/refs?service=git-upload-pack" }]
        : [302, { location: `http://127.0.0.3:${other.port}/x.git/info/refs?service=git-upload-pack` }],
    );
    cacheRoot = mkdtempSync(join(tmpdir(), "quarry-git-egress-test-"));
  });
  after(async () => {
    repo.builder.dispose();
    await server.stop();
    for (const c of [blocked, other, redirector]) await new Promise<void>((r) => c.server.close(() => r()));
    rmSync(cacheRoot, { recursive: true, force: true });
  });

  test("a host name resolving to a blocked address: refused before any connection", async () => {
    const url = `http://localhost:${blocked.port}/x.git`;
    const refs = new RefDiscovery();
    const why =
      /refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks/;
    await assert.rejects(refs.resolve(url, "main", req()), refused("blocked-address", why));
    await assert.rejects(refs.checkAccess(url, req()), refused("blocked-address", why));
    const source = new GitCliSource({ cacheRoot });
    await assert.rejects(
      source.readFile(url, repo.main, "task.yaml", req()),
      refused("blocked-address", why),
    );
    await assert.rejects(pinnedResolve(url, req()), refused("blocked-address", why));
    assert.equal(blocked.connections, 0);
  });

  test("a blocked literal address: refused, never connected", async () => {
    await assert.rejects(
      new RefDiscovery().resolve(`http://127.0.0.1:${blocked.port}/x.git`, "main", req()),
      refused("blocked-address", /refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32/),
    );
    assert.equal(blocked.connections, 0);
  });

  test("a redirect to another origin is refused; the other origin sees nothing", async () => {
    const url = `http://127.0.0.2:${redirector.port}/x.git`;
    await assert.rejects(
      new RefDiscovery().resolve(url, "main", req()),
      refused(
        "redirect",
        new RegExp(
          `^redirected from http://127\\.0\\.0\\.2:${redirector.port} to another origin http://127\\.0\\.0\\.3:${other.port}; not followed$`,
        ),
      ),
    );
    assert.equal(other.connections, 0);
  });

  test("a redirect within the origin is not followed either, and names where to point", async () => {
    const url = `http://127.0.0.2:${redirector.port}/same/x.git`;
    await assert.rejects(
      new RefDiscovery().resolve(url, "main", req()),
      refused(
        "redirect",
        /same\/x\.git redirects to http:\/\/127\.0\.0\.2:\d+\/moved\.git; the git resolver follows no redirect/,
      ),
    );
  });

  test("the git binary connects to the pinned, checked address and never resolves the name itself", async () => {
    // git cannot resolve .invalid: the fetch works only through the pin
    const url = `http://git-pinned.invalid:${server.port}/${repo.name}`;
    const lookupAll = async () => [{ address: "127.0.0.2", family: 4 }];
    const pin = await pinnedResolve(url, req(), lookupAll);
    assert.equal(pin, `git-pinned.invalid:${server.port}:127.0.0.2`);
    const env = remoteEnv(url, { resolve: pin });
    const res = await runGit({
      args: ["ls-remote", url, "refs/heads/main"],
      signal: AbortSignal.timeout(20_000),
      env,
    });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout.toString(), new RegExp(`^${repo.main}\\s+refs/heads/main`));
    const unpinned = await runGit({
      args: ["ls-remote", url, "refs/heads/main"],
      signal: AbortSignal.timeout(20_000),
      env: remoteEnv(url, {}),
    });
    assert.notEqual(unpinned.code, 0);
  });

  test("the git binary follows no redirect, to another origin or not", async () => {
    for (const path of ["/x.git", "/same/x.git"]) {
      const url = `http://127.0.0.2:${redirector.port}${path}`;
      const res = await runGit({
        args: ["ls-remote", url],
        signal: AbortSignal.timeout(20_000),
        env: remoteEnv(url, {}),
      });
      assert.notEqual(res.code, 0, path);
    }
    assert.equal(other.connections, 0);
  });
});
