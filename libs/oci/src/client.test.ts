// HTTP semantics of the client against a scripted node:http server on
// loopback: what is retryable (and for how long), what is refused before any
// byte is used, and the token flow's caching. The real registry (CNCF
// distribution) is exercised by e2e/scenarios/oci-client.test.ts.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { RegistryClient } from "./client.ts";
import { RegistryError } from "./errors.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
const seen: { method: string; url: string; auth: string | undefined }[] = [];
const server = createServer((req, res) => {
  seen.push({ method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization });
  handler(req, res);
});
let host = "";
before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const repo = () => ({ registry: host, repository: "team/b" });
const BLOB = Buffer.from("hello bundle");
const blobDigest = `sha256:${createHash("sha256").update(BLOB).digest("hex")}`;
const code =
  (c: string, extra: (e: RegistryError) => boolean = () => true) =>
  (e: unknown) =>
    e instanceof RegistryError && e.code === c && extra(e);

test("429 with Retry-After is retryable and carries the wait", async () => {
  handler = (_req, res) => res.writeHead(429, { "retry-after": "7" }).end();
  await assert.rejects(
    new RegistryClient().resolve(repo(), "v1"),
    code("unavailable", (e) => e.retryable && e.retryAfterMs === 7000 && e.status === 429),
  );
});

test("5xx is retryable; connection refused is retryable and names the error", async () => {
  handler = (_req, res) => res.writeHead(503).end();
  await assert.rejects(new RegistryClient().getManifest(repo(), "v1"), code("unavailable"));
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  await assert.rejects(
    new RegistryClient().resolve({ registry: `127.0.0.1:${port}`, repository: "a" }, "v1"),
    code("unavailable", (e) => /ECONNREFUSED/.test(e.message)),
  );
});

test("a blob over the cap is refused before any request", async () => {
  seen.length = 0;
  await assert.rejects(
    new RegistryClient().getBlob(repo(), { mediaType: "x", digest: blobDigest, size: 100 }, { maxBytes: 10 }),
    code("too-large"),
  );
  assert.equal(seen.length, 0);
});

test("a blob with more bytes than its descriptor, or other bytes, is a digest mismatch", async () => {
  handler = (_req, res) => res.end(Buffer.concat([BLOB, Buffer.from("extra")]));
  await assert.rejects(
    new RegistryClient().getBlob(repo(), { mediaType: "x", digest: blobDigest, size: BLOB.length }),
    code("digest-mismatch", (e) => /more than its/.test(e.message)),
  );
  handler = (_req, res) => res.end(Buffer.from("hello BUNDLE"));
  await assert.rejects(
    new RegistryClient().getBlob(repo(), { mediaType: "x", digest: blobDigest, size: BLOB.length }),
    code("digest-mismatch"),
  );
  handler = (_req, res) => res.end(BLOB);
  const ok = await new RegistryClient().getBlob(repo(), {
    mediaType: "x",
    digest: blobDigest,
    size: BLOB.length,
  });
  assert.deepEqual(ok, BLOB);
});

test("bearer flow: one token request for many calls; the token is sent, never the password, to the registry", async () => {
  let tokens = 0;
  handler = (req, res) => {
    if (req.url?.startsWith("/token")) {
      tokens++;
      assert.equal(req.headers.authorization, `Basic ${Buffer.from("u:p").toString("base64")}`);
      assert.match(req.url, /scope=repository%3Ateam%2Fb%3Apull/);
      res.setHeader("content-type", "application/json");
      return res.end(JSON.stringify({ token: "tok-1", expires_in: 300 }));
    }
    if (req.headers.authorization !== "Bearer tok-1") {
      return res
        .writeHead(401, { "www-authenticate": `Bearer realm="http://${host}/token",service="reg"` })
        .end();
    }
    res.end(BLOB);
  };
  seen.length = 0;
  const client = new RegistryClient();
  const d = { mediaType: "x", digest: blobDigest, size: BLOB.length };
  const credential = { username: "u", password: "p" };
  await Promise.all([1, 2, 3].map(() => client.getBlob(repo(), d, { credential })));
  await client.getBlob(repo(), d, { credential });
  assert.equal(tokens, 1);
  const toRegistry = seen.filter((s) => !s.url.startsWith("/token"));
  assert.ok(toRegistry.every((s) => s.auth === undefined || s.auth === "Bearer tok-1"));
});

test("a plain-HTTP realm on a non-loopback host never receives credentials, even when bound", async () => {
  handler = (_req, res) =>
    res.writeHead(401, { "www-authenticate": 'Bearer realm="http://auth.example.invalid/token"' }).end();
  const bound = () => [{ registry: host, realm: "auth.example.invalid" }];
  await assert.rejects(
    new RegistryClient({ tokenRealmHosts: bound }).resolve(repo(), "v1", {
      credential: { username: "u", password: "p" },
    }),
    code("insecure"),
  );
});

test("401 without credentials says so; 404 carries the registry's error code", async () => {
  handler = (_req, res) => res.writeHead(401, { "www-authenticate": 'Basic realm="r"' }).end();
  await assert.rejects(
    new RegistryClient().resolve(repo(), "v1"),
    code("unauthorized", (e) => /requires credentials/.test(e.message)),
  );
  handler = (_req, res) =>
    res
      .writeHead(404, { "content-type": "application/json" })
      .end(JSON.stringify({ errors: [{ code: "MANIFEST_UNKNOWN" }] }));
  await assert.rejects(
    new RegistryClient().getManifest(repo(), "v9"),
    code("not-found", (e) => /MANIFEST_UNKNOWN/.test(e.message)),
  );
});

test("plain HTTP only for loopback and hosts the caller allows; HTTPS everywhere else", async () => {
  const urls: string[] = [];
  const recording = (async (input: string | URL | Request) => {
    urls.push(String(input));
    return new Response(null, { status: 404 });
  }) as typeof fetch;
  const client = new RegistryClient({ fetch: recording, allowsPlainHttp: (h) => h === "reg.internal:5000" });
  for (const registry of [
    "127.0.0.1:5000",
    "localhost:5000",
    "[::1]:5000",
    "reg.internal:5000",
    "ghcr.io",
    "docker.io",
  ]) {
    await assert.rejects(client.resolve({ registry, repository: "a/b" }, "v1"), code("not-found"));
  }
  assert.deepEqual(urls, [
    "http://127.0.0.1:5000/v2/a/b/manifests/v1",
    "http://localhost:5000/v2/a/b/manifests/v1",
    "http://[::1]:5000/v2/a/b/manifests/v1",
    "http://reg.internal:5000/v2/a/b/manifests/v1",
    "https://ghcr.io/v2/a/b/manifests/v1",
    "https://registry-1.docker.io/v2/a/b/manifests/v1",
  ]);
});

test("a blob redirect to another origin (a registry's storage) gets no credentials", async () => {
  const storage = createServer((req, res) => {
    storageAuth = req.headers.authorization;
    res.end(BLOB);
  });
  let storageAuth: string | undefined = "unset";
  await new Promise<void>((r) => storage.listen(0, "127.0.0.1", r));
  try {
    const storageUrl = `http://127.0.0.1:${(storage.address() as AddressInfo).port}/blob`;
    handler = (req, res) => {
      if (req.headers.authorization === undefined) {
        return res.writeHead(401, { "www-authenticate": 'Basic realm="r"' }).end();
      }
      res.writeHead(307, { location: storageUrl }).end();
    };
    const blob = await new RegistryClient().getBlob(
      repo(),
      { mediaType: "x", digest: blobDigest, size: BLOB.length },
      { credential: { username: "u", password: "p" } },
    );
    assert.deepEqual(blob, BLOB);
    assert.equal(storageAuth, undefined);
  } finally {
    storage.close();
  }
});

test("a manifest or token redirect to another origin is refused; the other origin never hears of it", async () => {
  let otherConnections = 0;
  const other = createServer((_req, res) => res.end("{}"));
  other.on("connection", () => otherConnections++);
  await new Promise<void>((r) => other.listen(0, "127.0.0.3", r));
  const otherOrigin = `http://127.0.0.3:${(other.address() as AddressInfo).port}`;
  try {
    handler = (_req, res) => res.writeHead(302, { location: `${otherOrigin}/v2/team/b/manifests/v1` }).end();
    await assert.rejects(
      new RegistryClient().getManifest(repo(), "v1"),
      code(
        "redirect",
        (e) => e.message === `redirected from http://${host} to another origin ${otherOrigin}; not followed`,
      ),
    );
    // the realm is on this server and redirects away: the credentials stay here
    handler = (req, res) => {
      if (req.url?.startsWith("/token"))
        return res.writeHead(302, { location: `${otherOrigin}/token` }).end();
      res.writeHead(401, { "www-authenticate": `Bearer realm="http://${host}/token",service="r"` }).end();
    };
    await assert.rejects(
      new RegistryClient().resolve(repo(), "v1", { credential: { username: "u", password: "p" } }),
      code("redirect", (e) =>
        /token realm http:\/\/127\.0\.0\.1:\d+: redirected from .* to another origin/.test(e.message),
      ),
    );
    assert.equal(otherConnections, 0);
  } finally {
    other.close();
  }
});

test("same-origin redirects are followed with the credentials, a few hops at most", async () => {
  seen.length = 0;
  handler = (req, res) => {
    if (req.url === "/v2/team/b/blobs/final") return res.end(BLOB);
    if (req.url?.startsWith("/v2/team/b/blobs/sha256:"))
      return res.writeHead(307, { location: "/v2/team/b/blobs/final" }).end();
    res.writeHead(302, { location: req.url ?? "/" }).end();
  };
  const blob = await new RegistryClient().getBlob(repo(), {
    mediaType: "x",
    digest: blobDigest,
    size: BLOB.length,
  });
  assert.deepEqual(blob, BLOB);
  await assert.rejects(
    new RegistryClient().getManifest(repo(), "v1"),
    code("egress", (e) => /more than 5 redirects/.test(e.message)),
  );
});
