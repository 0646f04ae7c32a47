// The registry client as the bundle resolver wires it (main.ts: the SDK's
// egressFetch) against scripted registries on loopback: a registry on
// 127.0.0.2, a storage backend on 127.0.0.3, and a capture server on
// 127.0.0.1 that blocked-networks blocks here. The capture server's
// connection count proves a refused realm or redirect was never contacted.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { DockerCredentials, RegistryClient, RegistryError } from "@quarry/oci";
import { effectiveEgress, egressFetch, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import { BundleResolver } from "./resolver.ts";

const CONFIG = { "blocked-networks": "default, 127.0.0.1/32" };
const USER = { username: "u", password: "registry-password" };
const BASIC = `Basic ${Buffer.from("u:registry-password").toString("base64")}`;
const BLOB = Buffer.from("a layer");
const BLOB_DESC = {
  mediaType: "x",
  digest: `sha256:${createHash("sha256").update(BLOB).digest("hex")}`,
  size: BLOB.length,
};

interface Scripted {
  server: Server;
  port: number;
  connections: number;
  seen: { url: string; auth: string | undefined }[];
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

async function scripted(address: string): Promise<Scripted> {
  const s: Scripted = {
    server: createServer(),
    port: 0,
    connections: 0,
    seen: [],
    handler: (_q, r) => r.end(),
  };
  s.server.on("connection", () => s.connections++);
  s.server.on("request", (req, res) => {
    s.seen.push({ url: req.url ?? "", auth: req.headers.authorization });
    s.handler(req, res);
  });
  await new Promise<void>((r) => s.server.listen(0, address, r));
  s.port = (s.server.address() as AddressInfo).port;
  return s;
}

const ctx = (): ResolveContext =>
  ({
    signal: AbortSignal.timeout(10_000),
    namespace: "ns",
    name: "r",
    config: CONFIG,
    log: { warn() {}, info() {}, debug() {} },
  }) as unknown as ResolveContext;

describe("registry egress through the SDK's egressFetch", () => {
  let registry: Scripted;
  let storage: Scripted;
  let capture: Scripted;
  let resolver: BundleResolver;
  let client: RegistryClient;
  /** A fresh client and resolver: the client remembers each registry's last challenge. */
  const fresh = () => {
    client = new RegistryClient({ fetch: egressFetch(() => resolver.egress()) });
    resolver = new BundleResolver({
      registry: client,
      loadCredentials: async () => {
        const credentials = new DockerCredentials();
        credentials.add(
          JSON.stringify({ auths: { [`127.0.0.2:${registry.port}`]: USER } }),
          "Secret ns/pull",
        );
        return { credentials, sources: ["Secret ns/pull"] };
      },
    });
    resolver.validateConfig(CONFIG);
  };

  before(async () => {
    registry = await scripted("127.0.0.2");
    storage = await scripted("127.0.0.3");
    capture = await scripted("127.0.0.1");
    storage.handler = (_q, r) => r.end(BLOB);
    fresh();
    assert.equal(effectiveEgress(resolver.egress()).blockedNetworks?.blocking("127.0.0.1"), "127.0.0.1/32");
  });
  after(async () => {
    for (const s of [registry, storage, capture]) await new Promise<void>((r) => s.server.close(() => r()));
    assert.equal(capture.connections, 0, "the blocked capture server was connected to");
  });

  test("a bearer realm on a host resolving to a blocked address: Forbidden, naming it; never contacted", async () => {
    fresh();
    registry.handler = (_q, res) =>
      res
        .writeHead(401, {
          "www-authenticate": `Bearer realm="http://localhost:${capture.port}/token",service="r"`,
        })
        .end();
    const bundle = `127.0.0.2:${registry.port}/team/b:v1`;
    await assert.rejects(
      resolver.resolve({ bundle, name: "build", secret: "pull" }, ctx()),
      (err: unknown) => {
        assert.ok(err instanceof ResolutionError, String(err));
        assert.equal(err.reason, "Forbidden");
        assert.match(
          err.message,
          /^param "bundle": 127\.0\.0\.2:\d+\/team\/b: token realm http:\/\/localhost:\d+: refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
        );
        assert.ok(!err.message.includes("registry-password"));
        return true;
      },
    );
    assert.equal(capture.connections, 0);
  });

  test("a blob redirected to a storage host on an allowed address is followed without the registry's Authorization", async () => {
    fresh();
    registry.handler = (req, res) => {
      if (req.headers.authorization !== BASIC)
        return res.writeHead(401, { "www-authenticate": 'Basic realm="r"' }).end();
      res.writeHead(307, { location: `http://127.0.0.3:${storage.port}/blob?sig=abc` }).end();
    };
    const blob = await client.getBlob(
      { registry: `127.0.0.2:${registry.port}`, repository: "team/b" },
      BLOB_DESC,
      {
        credential: USER,
      },
    );
    assert.deepEqual(blob, BLOB);
    assert.equal(registry.seen.at(-1)?.auth, BASIC);
    assert.deepEqual(storage.seen, [{ url: "/blob?sig=abc", auth: undefined }]);
  });

  test("a blob redirected to a blocked address (by name or literal) is refused, never contacted", async () => {
    for (const target of [`http://localhost:${capture.port}/blob`, `http://127.0.0.1:${capture.port}/blob`]) {
      fresh();
      registry.handler = (_q, res) => res.writeHead(302, { location: target }).end();
      await assert.rejects(
        client.getBlob({ registry: `127.0.0.2:${registry.port}`, repository: "team/b" }, BLOB_DESC),
        (err: unknown) =>
          err instanceof RegistryError &&
          err.code === "egress" &&
          /which blocked-networks blocks/.test(err.message),
      );
    }
    assert.equal(capture.connections, 0);
  });

  test("a manifest redirected to another origin: Forbidden through the resolver, storage never contacted", async () => {
    const before = storage.connections;
    fresh();
    registry.handler = (_q, res) =>
      res.writeHead(302, { location: `http://127.0.0.3:${storage.port}/v2/team/b/manifests/v1` }).end();
    await assert.rejects(
      resolver.resolve({ bundle: `127.0.0.2:${registry.port}/team/b:v1`, name: "build" }, ctx()),
      (err: unknown) =>
        err instanceof ResolutionError &&
        err.reason === "Forbidden" &&
        /redirected from http:\/\/127\.0\.0\.2:\d+ to another origin http:\/\/127\.0\.0\.3:\d+; not followed/.test(
          err.message,
        ),
    );
    assert.equal(storage.connections, before);
  });

  test("a registry named by a blocked literal address fails before any request", async () => {
    await assert.rejects(
      resolver.resolve({ bundle: `127.0.0.1:${capture.port}/team/b:v1`, name: "build" }, ctx()),
      (err: unknown) =>
        err instanceof ResolutionError &&
        err.reason === "Forbidden" &&
        /^param "bundle": registry refusing to connect to 127\.0\.0\.1: 127\.0\.0\.1 is in 127\.0\.0\.1\/32/.test(
          err.message,
        ),
    );
  });
});
