// webSocketExec against a local WebSocket server that plays the apiserver's
// exec endpoint: a node:http server answering the upgrade itself and writing
// the channel protocol's frames (server frames are unmasked, so a few bytes of
// framing suffice). The real apiserver and kubelet are e2e's (pipe-resolve,
// pipe-load, run-pipe-succeeds); this covers what they cannot make happen:
// refusals, a socket closed without a status, an abort mid-stream.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Agent, createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import type { ExecOutcome } from "./copy.ts";
import { webSocketExec } from "./ws-exec.ts";

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const target = { namespace: "team-a", pod: "pipe-x1", container: "wait" };

/** One unmasked server frame (binary, or close with opcode 8). */
function serverFrame(payload: Uint8Array, opcode = 2): Buffer {
  const len = payload.length;
  const head =
    len < 126 ? Buffer.from([0x80 | opcode, len]) : Buffer.from([0x80 | opcode, 126, len >> 8, len & 0xff]);
  return Buffer.concat([head, payload]);
}
const channel = (n: number, data: string | Uint8Array) =>
  serverFrame(Uint8Array.from([n, ...(typeof data === "string" ? Buffer.from(data) : data)]));
const status = (s: object) => channel(3, JSON.stringify(s));

type Script = (socket: Socket, req: IncomingMessage) => void;

interface Seen {
  url: string;
  authorization: string | undefined;
  protocols: string | undefined;
}

let script: { protocol?: string; refuse?: number; run: Script } = { run: () => {} };
const seen: Seen[] = [];
const sockets = new Set<Socket>();
/** plain requests (the warm-up's GET /version): method, path and Authorization */
const plain: string[] = [];
const server = createServer((req, res) => {
  plain.push(`${req.method} ${req.url} ${req.headers.authorization}`);
  if (req.url === "/version") res.end('{"major":"1"}');
  else res.writeHead(426).end();
});
server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
  socket.on("error", () => {});
  seen.push({
    url: req.url ?? "",
    authorization: req.headers.authorization,
    protocols: req.headers["sec-websocket-protocol"],
  });
  if (script.refuse) {
    const body = JSON.stringify({
      kind: "Status",
      status: "Failure",
      reason: "Forbidden",
      code: script.refuse,
    });
    socket.end(
      `HTTP/1.1 ${script.refuse} Refused\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    return;
  }
  const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}${WS_GUID}`).digest("base64");
  const protocol = script.protocol ?? "v5.channel.k8s.io";
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n` +
      (protocol ? `Sec-WebSocket-Protocol: ${protocol}\r\n` : "") +
      "\r\n",
  );
  // the client's frames (its close) are not read: each script ends the socket itself
  socket.on("data", () => {});
  script.run(socket, req);
});

// the client's own Agent is for its REST calls; the WebSocket gets an undici Agent for the same TLS material
const agent = new Agent({ keepAlive: true });
const tls = {};
let exec: ReturnType<typeof webSocketExec>;

before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  exec = webSocketExec(
    {
      server: `http://127.0.0.1:${port}`,
      authenticate: async () => ({ headers: { Authorization: "Bearer t0ken" }, agent, tls }),
    },
    { closeGraceMs: 200 },
  );
});
after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
  agent.destroy();
});

async function run(
  s: typeof script,
  signal = new AbortController().signal,
): Promise<{ outcome: Promise<ExecOutcome>; out: () => string; err: () => string }> {
  script = s;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const outcome = exec(target, ["tar", "cf", "-", "/workspace/out"], {
    stdout: (c) => out.push(Buffer.from(c)),
    stderr: (c) => err.push(Buffer.from(c)),
    signal,
  });
  return {
    outcome,
    out: () => Buffer.concat(out).toString("utf8"),
    err: () => Buffer.concat(err).toString("utf8"),
  };
}

describe("webSocketExec", () => {
  it("streams stdout and stderr and resolves with the Status's exit", async () => {
    const r = await run({
      run: (socket) => {
        socket.write(Buffer.concat([channel(1, ""), channel(2, ""), channel(3, "")]));
        socket.write(channel(1, "x".repeat(300)));
        socket.write(channel(2, "tar: Removing leading `/'\n"));
        socket.write(channel(1, "end"));
        socket.write(channel(255, Uint8Array.from([1])));
        socket.write(status({ status: "Success" }));
      },
    });
    assert.deepEqual(await r.outcome, { exitCode: 0, message: "" });
    assert.equal(r.out(), `${"x".repeat(300)}end`);
    assert.equal(r.err(), "tar: Removing leading `/'\n");
    const last = seen.at(-1);
    assert.equal(last?.authorization, "Bearer t0ken");
    assert.equal(last?.protocols, "v5.channel.k8s.io, v4.channel.k8s.io");
    const url = new URL(`http://x${last?.url}`);
    assert.equal(url.pathname, "/api/v1/namespaces/team-a/pods/pipe-x1/exec");
    assert.deepEqual(url.searchParams.getAll("command"), ["tar", "cf", "-", "/workspace/out"]);
  });

  it("speaks v4 when the server chooses it, and reads a non-zero exit", async () => {
    const r = await run({
      protocol: "v4.channel.k8s.io",
      run: (socket) => {
        socket.write(channel(2, "tar: /workspace/out: Cannot stat: No such file or directory\n"));
        socket.write(
          status({
            status: "Failure",
            reason: "NonZeroExitCode",
            message: "command terminated with non-zero exit code: exit code 2",
            details: { causes: [{ reason: "ExitCode", message: "2" }] },
          }),
        );
      },
    });
    const outcome = await r.outcome;
    assert.equal(outcome.exitCode, 2);
    assert.match(r.err(), /No such file/);
  });

  it("fails as before when the apiserver refuses the upgrade", async () => {
    for (const code of [403, 404]) {
      const r = await run({ refuse: code, run: () => {} });
      await assert.rejects(r.outcome, {
        message: `exec in pod team-a/pipe-x1: Unexpected server response: ${code}`,
      });
    }
  });

  it("fails when the server chooses none of the offered protocols", async () => {
    const r = await run({ protocol: "", run: () => {} });
    await assert.rejects(
      r.outcome,
      /exec in pod team-a\/pipe-x1: the apiserver accepted none of the exec protocols/,
    );
  });

  it("fails, not hangs, when the socket closes without a status", async () => {
    const closeFrame = serverFrame(Uint8Array.from([0x03, 0xe8]), 8);
    for (const end of [(s: Socket) => s.end(closeFrame), (s: Socket) => s.destroy()]) {
      const r = await run({
        run: (socket) => {
          socket.write(channel(1, "partial"));
          setTimeout(() => end(socket), 20);
        },
      });
      await assert.rejects(r.outcome, {
        message: "exec in pod team-a/pipe-x1: the connection closed before the command's exit status",
      });
      assert.equal(r.out(), "partial");
    }
  });

  it("closes the socket when the signal aborts mid-stream", async () => {
    const abort = new AbortController();
    let closed!: Promise<void>;
    const r = await run(
      {
        run: (socket) => {
          // the server's sockets are half-open: the client's TCP close reads as "end"
          closed = new Promise((resolve) => socket.on("end", () => resolve()));
          socket.write(channel(1, "first"));
        },
      },
      abort.signal,
    );
    while (r.out() === "") await new Promise((res) => setTimeout(res, 5));
    abort.abort(new Error("stopped reading: tooLarge"));
    await assert.rejects(r.outcome, { message: "stopped reading: tooLarge" });
    // this server never answers the client's close frame: the client drops the socket after its grace
    const t0 = Date.now();
    await closed;
    assert.ok(Date.now() - t0 < 5_000, "the socket was closed after the grace");
  });

  it("rejects at once when the signal has aborted already", async () => {
    const abort = new AbortController();
    abort.abort(new Error("deadline"));
    const before = seen.length;
    const r = await run({ run: () => {} }, abort.signal);
    await assert.rejects(r.outcome, { message: "deadline" });
    assert.equal(seen.length, before);
  });
});

describe("prepare", () => {
  it("readies the connection once, with a GET /version carrying the client's Authorization", async () => {
    plain.length = 0;
    assert.ok(exec.prepare, "the WebSocket exec can be prepared");
    exec.prepare();
    exec.prepare();
    const deadline = Date.now() + 5000;
    while (plain.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(plain, ["GET /version Bearer t0ken"]);
  });
});
