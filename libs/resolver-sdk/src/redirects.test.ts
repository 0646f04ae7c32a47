// egressFetch's address check and redirect policy against real servers on
// three loopback addresses: a source on 127.0.0.2, another origin on
// 127.0.0.3, and a capture server on 127.0.0.1 that the config blocks. Each
// server counts the connections it accepted, which proves a refused hop was
// never attempted.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { parseBlockedNetworks } from "./blocked-networks.ts";
import { type Egress, egressFetch, NO_EGRESS } from "./egress.ts";
import { EgressError } from "./egress-error.ts";
import { followRedirects } from "./redirects.ts";

interface Recorded {
  server: Server;
  origin: string;
  connections: number;
  requests: { path: string; authorization: string | undefined }[];
}

async function serve(
  address: string,
  route: (req: IncomingMessage, origin: string) => [number, Record<string, string>, string],
) {
  const rec: Recorded = { server: createServer(), origin: "", connections: 0, requests: [] };
  rec.server.on("connection", () => rec.connections++);
  rec.server.on("request", (req, res) => {
    rec.requests.push({ path: req.url ?? "", authorization: req.headers.authorization });
    const [status, headers, body] = route(req, rec.origin);
    res.writeHead(status, headers).end(body);
  });
  await new Promise<void>((r) => rec.server.listen(0, address, r));
  rec.origin = `http://${address}:${(rec.server.address() as AddressInfo).port}`;
  return rec;
}

const egress: Egress = {
  ...NO_EGRESS,
  blockedNetworks: parseBlockedNetworks("blocked-networks", "default, 127.0.0.1/32"),
};
const AUTH = { authorization: "Bearer registry-token" };

describe("egressFetch: blocked addresses and redirects", () => {
  let source: Recorded;
  let other: Recorded;
  let capture: Recorded;
  const f = egressFetch(() => egress);

  before(async () => {
    capture = await serve("127.0.0.1", () => [200, {}, "captured"]);
    other = await serve("127.0.0.3", () => [200, {}, "other"]);
    const capturePort = new URL(capture.origin).port;
    source = await serve("127.0.0.2", (req) => {
      switch (req.url) {
        case "/same":
          return [302, { location: "/final" }, ""];
        case "/final":
          return [200, {}, "ok"];
        case "/cross":
          return [302, { location: `${other.origin}/blob` }, ""];
        case "/to-blocked-name":
          return [307, { location: `http://localhost:${capturePort}/steal` }, ""];
        case "/to-blocked-literal":
          return [302, { location: `${capture.origin}/steal` }, ""];
        case "/loop":
          return [302, { location: "/loop" }, ""];
        default:
          return [404, {}, ""];
      }
    });
  });
  after(async () => {
    for (const s of [source, other, capture]) await new Promise<void>((r) => s.server.close(() => r()));
    assert.equal(capture.connections, 0, "the blocked capture server was connected to");
  });

  test("a host name resolving to a blocked address: refused, never connected", async () => {
    const port = new URL(capture.origin).port;
    await assert.rejects(f(`http://localhost:${port}/x`, { headers: AUTH }), (err: unknown) => {
      assert.ok(err instanceof EgressError && err.code === "blocked-address", String(err));
      assert.match(
        err.message,
        /^refusing to connect to localhost: it resolves to 127\.0\.0\.1, in 127\.0\.0\.1\/32, which blocked-networks blocks$/,
      );
      return true;
    });
    assert.equal(capture.connections, 0);
  });

  test("a blocked literal address and its IPv4-mapped form: refused, never connected", async () => {
    const port = new URL(capture.origin).port;
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]"])
      await assert.rejects(
        f(`http://${host}:${port}/x`),
        (err: unknown) => err instanceof EgressError && err.code === "blocked-address",
      );
    assert.equal(capture.connections, 0);
  });

  test("same-origin redirects are followed with the request's headers", async () => {
    const res = await f(`${source.origin}/same`, { headers: AUTH });
    assert.equal(await res.text(), "ok");
    assert.deepEqual(source.requests.slice(-2), [
      { path: "/same", authorization: AUTH.authorization },
      { path: "/final", authorization: AUTH.authorization },
    ]);
  });

  test("a cross-origin redirect is refused and the other origin never hears of it", async () => {
    await assert.rejects(f(`${source.origin}/cross`, { headers: AUTH }), (err: unknown) => {
      assert.ok(err instanceof EgressError && err.code === "cross-origin-redirect", String(err));
      assert.equal(
        err.message,
        `redirected from ${source.origin} to another origin ${other.origin}; not followed`,
      );
      return true;
    });
    assert.equal(other.connections, 0);
  });

  test("a redirect loop ends after the cap", async () => {
    await assert.rejects(
      f(`${source.origin}/loop`),
      (err: unknown) =>
        err instanceof EgressError && err.code === "redirect" && /more than 5 redirects/.test(err.message),
    );
  });

  test('redirect: "manual" hands the 3xx to the caller', async () => {
    const res = await f(`${source.origin}/cross`, { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), `${other.origin}/blob`);
  });

  test("opted in (a registry blob): another origin is followed without the Authorization header", async () => {
    const send = (url: URL, init: RequestInit) => f(url, init);
    const res = await followRedirects(
      send,
      new URL(`${source.origin}/cross`),
      { headers: AUTH },
      { crossOrigin: "without-credentials" },
    );
    assert.equal(await res.text(), "other");
    assert.equal(source.requests.at(-1)?.authorization, AUTH.authorization);
    assert.deepEqual(other.requests, [{ path: "/blob", authorization: undefined }]);
  });

  test("opted in, but to a blocked address (by name or literal): refused, never connected", async () => {
    const send = (url: URL, init: RequestInit) => f(url, init);
    for (const path of ["/to-blocked-name", "/to-blocked-literal"])
      await assert.rejects(
        followRedirects(send, new URL(`${source.origin}${path}`), {}, { crossOrigin: "without-credentials" }),
        (err: unknown) =>
          err instanceof EgressError && err.code === "blocked-address" && err.message.includes("127.0.0.1"),
      );
    assert.equal(capture.connections, 0);
  });
});
