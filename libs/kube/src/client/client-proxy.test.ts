// A kubeconfig with proxy-url: @kubernetes/client-node reads it and its proxy
// dispatcher carries the calls (undici's fetch, imported then), the one path
// that does not go through http-transport.ts.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { writeKubeconfig } from "../testing/kubeconfig-fixture.ts";
import { RestKubeClient } from "./client.ts";
import { configMaps } from "./resources.ts";

const dir = mkdtempSync(join(tmpdir(), "client-proxy-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function listen(server: ReturnType<typeof createServer>): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

test("a kubeconfig's proxy-url: calls and watches go through the proxy, with the user's token", async () => {
  const apiserver = createServer((req, res) => {
    if (req.url?.includes("watch=true")) {
      res.write(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a" } } })}\n`);
      res.end();
      return;
    }
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ path: req.url, authorization: req.headers.authorization }));
  });
  const apiPort = await listen(apiserver);
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    // absolute-form requests (a forwarding proxy)
    seen.push(`${req.method} ${req.url}`);
    const upstream = request(req.url ?? "", { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  proxy.on("connect", (req, socket, head) => {
    // tunnels (CONNECT host:port)
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect(Number(port), host, () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  const proxyPort = await listen(proxy);
  const file = writeKubeconfig(
    join(dir, "proxy.kubeconfig"),
    { server: `http://127.0.0.1:${apiPort}`, "proxy-url": `http://127.0.0.1:${proxyPort}` },
    { token: "via-proxy" },
  );
  const client = RestKubeClient.fromEnvironment(file);
  assert.equal(client.readByLibrary, true);
  const answer = await client.request<{ path: string; authorization: string }>("GET", "/api");
  assert.deepEqual(answer, { path: "/api", authorization: "Bearer via-proxy" });
  const events = [];
  for await (const e of client.watch(configMaps, "default", {}, new AbortController().signal)) events.push(e);
  assert.deepEqual(events, [{ type: "ADDED", object: { metadata: { name: "a" } } }]);
  assert.ok(seen.length > 0, "the proxy carried the calls");
});
