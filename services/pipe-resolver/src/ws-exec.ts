// ExecFn over the pods/exec subresource: npm undici's WebSocket, the channel
// protocol of exec-channels.ts, and the client's own Authentication (its
// Authorization header, and its TLS material: the CA and client certificate,
// on an undici Agent of this file's, one per material). No @kubernetes/client-node: importing it cost the pipe
// resolver ~85 MiB of RSS, and importing it on the first exec instead was too
// slow under load (see docs/decisions.md). kube-exec.ts keeps the library's
// exec for the kubeconfigs only it reads.
//
// WHATWG's WebSocket hides why a handshake failed (no HTTP status): an
// interceptor on the dispatcher, for this socket alone, records what the
// upgrade request came to, so a refusal still names the apiserver's status.
import type { Duplex } from "node:stream";
import { type Authentication, setTlsFields } from "@quarry/kube";
import type { Agent, Dispatcher } from "undici";
import type { ExecFn, ExecOutcome } from "./copy.ts";
import {
  ChannelDemux,
  EXEC_PROTOCOLS,
  execPath,
  type Handshake,
  handshakeFailure,
  webSocketUrl,
} from "./exec-channels.ts";

/** Where the apiserver is and what every request to it carries (RestKubeClient is one). */
export interface ExecEndpoint {
  readonly server: string;
  authenticate(): Promise<Authentication>;
}

/**
 * How long our close waits for the server's before the socket is destroyed: undici waits for it
 * without a bound (the `ws` package, client-node's, waits 30 s), and a hung apiserver would keep
 * the socket for good.
 */
const CLOSE_GRACE_MS = 5_000;

interface Seen {
  handshake: Handshake;
  /** the upgraded connection, for closing it when the server does not answer our close */
  socket?: Duplex;
}

/** Records the upgrade request's outcome, forwarding every call to fetch's own handler. */
function watchHandshake(seen: Seen): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) =>
    dispatch(opts, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, statusCode, headers, socket) => {
        const protocol = headers["sec-websocket-protocol"];
        seen.handshake = {
          kind: "upgraded",
          protocol: Array.isArray(protocol) ? protocol.join(", ") : protocol,
        };
        seen.socket = socket;
        return handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
      },
      onResponseStart: (controller, statusCode, headers, statusMessage) => {
        if (statusCode >= 200) seen.handshake = { kind: "refused", status: statusCode };
        return handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
      },
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => {
        if (seen.handshake.kind === "pending") seen.handshake = { kind: "failed", error };
        return handler.onResponseError?.(controller, error);
      },
      onResponseStarted: () => handler.onResponseStarted?.(),
      onBodySent: (chunk) => handler.onBodySent?.(chunk),
      onRequestSent: () => handler.onRequestSent?.(),
    });
}

type Undici = typeof import("undici");
let undiciLib: Promise<Undici> | undefined;

/**
 * undici, imported at the first pipe pod (warmUp) or exec, not at start: a resolver without pipe
 * work does not carry its modules (docs/performance.md, "Import costs"). A failed import is not
 * remembered.
 */
function loadUndici(): Promise<Undici> {
  undiciLib ??= import("undici").catch((err: unknown) => {
    undiciLib = undefined;
    throw err;
  });
  return undiciLib;
}

/**
 * The undici Agent for a connection's TLS material: the client keeps one material object per
 * Agent of its own, so keying by it keeps one undici Agent (and its connections) per material.
 */
const tlsAgents = new WeakMap<Authentication["tls"], Agent>();
function undiciAgentFor(undici: Undici, tls: Authentication["tls"]): Agent {
  let agent = tlsAgents.get(tls);
  if (!agent) {
    agent = new undici.Agent({ allowH2: false, connect: setTlsFields(tls) });
    tlsAgents.set(tls, agent);
  }
  return agent;
}

/**
 * Readies undici for the first exec, in the background: its Agent for the connection's TLS
 * material, a kept-alive connection, and its HTTP/1.1 parser, which undici compiles from
 * WebAssembly on its first request (~70 ms on an idle machine, seconds on a loaded one). Since the
 * apiserver calls no longer go through undici (libs/kube http-transport.ts), nothing else has done
 * this by the first copy, and a first copy that paid for it under CI load took a step over e2e
 * `pipe-load`'s 5 s bound. Done on the first pipe pod, not at start, so a resolver without pipe
 * work does not carry undici's parser (~15 MiB). A GET of /version, which every client may read.
 */
function warmUp(endpoint: ExecEndpoint): Promise<void> {
  return (async () => {
    const undici = await loadUndici();
    const { headers, dispatcher, tls } = await endpoint.authenticate();
    const res = await undici.fetch(`${endpoint.server.replace(/\/$/, "")}/version`, {
      headers,
      dispatcher: dispatcher ?? undiciAgentFor(undici, tls),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
  })().catch(() => {
    // a failed warm-up costs nothing: the exec itself reports what is wrong
  });
}

export function webSocketExec(endpoint: ExecEndpoint, opts: { closeGraceMs?: number } = {}): ExecFn {
  const closeGraceMs = opts.closeGraceMs ?? CLOSE_GRACE_MS;
  let prepared = false;
  const exec: ExecFn = async (target, command, io) => {
    io.signal.throwIfAborted();
    const undici = await loadUndici();
    const { headers, dispatcher, tls } = await endpoint.authenticate();
    io.signal.throwIfAborted();
    const where = `exec in pod ${target.namespace}/${target.pod}`;
    const seen: Seen = { handshake: { kind: "pending" } };
    const ws = new undici.WebSocket(webSocketUrl(endpoint.server, execPath(target, command)), {
      protocols: [...EXEC_PROTOCOLS],
      headers,
      dispatcher: (dispatcher ?? undiciAgentFor(undici, tls)).compose(watchHandshake(seen)),
    });
    ws.binaryType = "arraybuffer";
    const demux = new ChannelDemux(io.stdout, io.stderr);
    let opened = false;
    let closed = false;
    const close = () => {
      ws.close();
      const grace = setTimeout(() => {
        if (!closed) seen.socket?.destroy();
      }, closeGraceMs);
      grace.unref();
    };
    return new Promise<ExecOutcome>((resolve, reject) => {
      let settled = false;
      const settle = (done: () => void) => {
        if (settled) return;
        settled = true;
        io.signal.removeEventListener("abort", onAbort);
        done();
      };
      // closing while the handshake is under way abandons it too
      const onAbort = () => {
        settle(() => reject(io.signal.reason));
        close();
      };
      io.signal.addEventListener("abort", onAbort, { once: true });
      ws.addEventListener("open", () => {
        opened = true;
      });
      ws.addEventListener("message", (event) => {
        if (settled || !(event.data instanceof ArrayBuffer)) return; // no base64 protocol was offered
        const exit = demux.push(new Uint8Array(event.data));
        if (exit === undefined) return;
        // the Status is the server's last word: everything before it has been delivered
        settle(() => resolve(exit));
        close();
      });
      // undici fires "error" then "close" for every failure, so "close" alone settles
      ws.addEventListener("close", () => {
        closed = true;
        const exit = demux.end();
        if (exit !== undefined) settle(() => resolve(exit));
        else if (opened)
          settle(() => reject(new Error(`${where}: the connection closed before the command's exit status`)));
        else settle(() => reject(new Error(`${where}: ${handshakeFailure(seen.handshake)}`)));
      });
    });
  };
  exec.prepare = () => {
    if (prepared) return;
    prepared = true;
    void warmUp(endpoint);
  };
  return exec;
}
