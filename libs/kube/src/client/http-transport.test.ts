import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, test } from "node:test";
import { gzipSync } from "node:zlib";
import { apiserverAgent, sendHttp } from "./http-transport.ts";

const sockets = new Set<Socket>();
let streamSocket: Socket | undefined;
/** the streaming responses held open, so a test can end them */
const open: ServerResponse[] = [];
const server = createServer((req, res) => {
  if (req.url === "/gzip") {
    res.setHeader("Content-Encoding", "gzip");
    res.end(gzipSync(JSON.stringify({ accepted: req.headers["accept-encoding"] })));
  } else if (req.url === "/stream") {
    res.write('{"type":"ADDED"}\n');
    open.push(res);
    streamSocket = req.socket;
  } else if (req.url === "/slow-stream") {
    // a quiet watch: a line, a pause longer than the idle timeout, another line, the end
    res.write("one\n");
    setTimeout(() => res.end("two\n"), 400);
  } else if (req.url === "/echo") {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () =>
      res.end(JSON.stringify({ method: req.method, body, length: req.headers["content-length"] })),
    );
  } else {
    res.end(String((req.socket as Socket).remotePort));
  }
});
server.on("connection", (s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});
after(() => {
  for (const s of sockets) s.destroy();
});
let base: string;

before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  for (const r of open) r.end();
  server.closeAllConnections();
  server.close();
});

test("a body and its length go out; the answer reads as text", async () => {
  const agent = apiserverAgent(base);
  const res = await sendHttp(new URL(`${base}/echo`), {
    method: "PATCH",
    headers: {},
    body: '{"é":1}',
    agent,
  });
  assert.equal(res.ok, true);
  assert.deepEqual(JSON.parse(await res.text()), { method: "PATCH", body: '{"é":1}', length: "8" });
  agent.destroy();
});

test("asks for gzip and reads a gzipped answer", async () => {
  const agent = apiserverAgent(base);
  const res = await sendHttp(new URL(`${base}/gzip`), { method: "GET", headers: {}, agent });
  assert.deepEqual(JSON.parse(await res.text()), { accepted: "gzip" });
  agent.destroy();
});

test("keep-alive: calls one after another share a socket", async () => {
  const agent = apiserverAgent(base);
  const port = async () =>
    await (await sendHttp(new URL(base), { method: "GET", headers: {}, agent })).text();
  assert.equal(await port(), await port());
  agent.destroy();
});

test("an abort while the body streams ends the stream with the abort's reason and destroys its socket", async () => {
  const agent = apiserverAgent(base);
  const ac = new AbortController();
  const res = await sendHttp(new URL(`${base}/stream`), {
    method: "GET",
    headers: {},
    agent,
    signal: ac.signal,
  });
  const read = (async () => {
    const seen: string[] = [];
    for await (const chunk of res.body) {
      seen.push(chunk.toString());
      ac.abort(new Error("watchdog"));
    }
    return seen;
  })();
  await assert.rejects(read, /watchdog/);
  // the frozen-connection rule: the aborted call's socket is closed, never reused
  const socket = streamSocket;
  assert.ok(socket);
  await new Promise<void>((resolve, reject) => {
    if (socket.destroyed) return resolve();
    const t = setTimeout(() => reject(new Error("the aborted call's socket stayed open")), 2000);
    socket.on("close", () => {
      clearTimeout(t);
      resolve();
    });
  });
  agent.destroy();
});

test("an abort before the answer rejects with the abort's reason", async () => {
  const agent = apiserverAgent(base);
  const ac = new AbortController();
  ac.abort(new Error("deadline"));
  await assert.rejects(
    sendHttp(new URL(base), { method: "GET", headers: {}, agent, signal: ac.signal }),
    /deadline/,
  );
  const late = new AbortController();
  const pending = sendHttp(new URL(`${base}/never`), {
    method: "GET",
    headers: {},
    agent,
    signal: late.signal,
  });
  late.abort(new Error("deadline"));
  await assert.rejects(pending, /deadline/);
  agent.destroy();
});

test("https: one SecureContext for every connection of the Agent; a plain Agent for http", () => {
  assert.equal(apiserverAgent("http://127.0.0.1:1").constructor.name, "Agent");
  const tls = apiserverAgent("https://127.0.0.1:1", { rejectUnauthorized: false, servername: undefined });
  const options = (tls as unknown as { options: Record<string, unknown>; protocol: string }).options;
  assert.equal((tls as unknown as { protocol: string }).protocol, "https:");
  assert.ok(options.secureContext, "a SecureContext made once");
  assert.equal(options.rejectUnauthorized, false);
  assert.equal("servername" in options, false);
});

test("an idle kept-alive socket is closed after the idle time; a quiet stream in use is not cut", async () => {
  const agent = apiserverAgent(base, {}, 100);
  const res = await sendHttp(new URL(`${base}/slow-stream`), { method: "GET", headers: {}, agent });
  assert.equal(await res.text(), "one\ntwo\n");
  const pooled = Object.values(agent.freeSockets).flat();
  assert.equal(pooled.length, 1, "the socket went back to the pool");
  const socket = pooled[0];
  assert.ok(socket);
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("the idle socket stayed open")), 2000);
    socket.on("close", () => {
      clearTimeout(t);
      resolve();
    });
  });
  agent.destroy();
});
