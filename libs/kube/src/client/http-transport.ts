// The apiserver transport: node:http(s) over one keep-alive Agent per
// connection, HTTP/1.1 only. Not undici's fetch: over HTTP/1.1 undici parses
// with llhttp compiled to WebAssembly, and importing it plus its first request
// cost a process ~28 MiB of RSS for as long as it lives (node:http's parser is
// native: ~2 MiB), about a quarter of a service at rest (docs/performance.md,
// "Fleet memory"). HTTP/1.1 because over HTTP/2 every call of a process shares
// one connection, and one frozen connection then holds every watch (the chaos
// suite's finding, docs/testing.md); here each call has its own socket, and an
// aborted call (the informer's watchdog, a deadline) destroys the socket it was
// on, so the next attempt dials a fresh one.
import type { Agent as HttpAgent, IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { pipeline } from "node:stream";
import { type ConnectionOptions, createSecureContext } from "node:tls";
import { createGunzip } from "node:zlib";
import { nodeHttp } from "./node-http.ts";

/** CA and client certificate of a connection, as node:tls (and undici's connect) take them. */
export type TlsMaterial = Pick<
  ConnectionOptions,
  "ca" | "cert" | "key" | "pfx" | "passphrase" | "rejectUnauthorized" | "servername"
>;

/**
 * How long a kept-alive socket may sit idle in the pool before it is closed (undici's default
 * keepAliveTimeout, which this transport replaced). A pool that keeps idle sockets for good keeps
 * the ones a dead NAT entry froze too: after the chaos suite froze every connection, each new call
 * drew a frozen idle socket and waited out its 30 s deadline before a fresh one was dialled.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * An Agent for `server`: keep-alive (idle sockets closed after `idleMs`), HTTP/1.1, and for https
 * the TLS material in one SecureContext made here. Without it node:tls builds a context (parsing
 * the CA and the client certificate) for every new connection, which a burst opening sockets by
 * the dozen paid each time. A socket in use is never timed out by the Agent (a quiet watch is
 * the informer watchdog's business).
 */
export function apiserverAgent(server: string, tls: TlsMaterial = {}, idleMs = IDLE_SOCKET_MS): HttpAgent {
  if (new URL(server).protocol === "http:") return new nodeHttp.Agent({ keepAlive: true, timeout: idleMs });
  const { rejectUnauthorized, servername, ...material } = tls;
  const set = setTlsFields(material);
  return new HttpsAgent({
    keepAlive: true,
    timeout: idleMs,
    secureContext: createSecureContext(set),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
  });
}

/** The fields of TLS material that are set: an undefined value would override node:tls's (and undici's) defaults. */
export function setTlsFields<T extends Partial<TlsMaterial>>(tls: T): Partial<T> {
  return Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export interface HttpCall {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  agent: HttpAgent;
  signal?: AbortSignal | undefined;
}

/** A response whose headers have arrived; read the body once, as text or as a stream of chunks. */
export interface HttpResponse {
  status: number;
  ok: boolean;
  text(): Promise<string>;
  body: AsyncIterable<Buffer>;
}

/**
 * One request; resolves once the response's headers are in. Aborting `signal` (before or after)
 * destroys the request and its socket, and a body being read then fails with the abort reason.
 */
export function sendHttp(url: URL, call: HttpCall): Promise<HttpResponse> {
  const request = url.protocol === "http:" ? nodeHttp.request : httpsRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    const { signal } = call;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const headers: Record<string, string> = { "Accept-Encoding": "gzip", ...call.headers };
    if (call.body !== undefined) headers["Content-Length"] = String(Buffer.byteLength(call.body));
    const req = request(url, { method: call.method, headers, agent: call.agent });
    const onAbort = () => req.destroy(signal?.reason as Error);
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => signal?.removeEventListener("abort", onAbort);
    req.on("error", (err) => {
      done();
      reject(err);
    });
    req.on("response", (res) => {
      // the listener stays until the body ends: an abort must still cut a watch's stream
      res.on("close", done);
      resolve(response(res, signal));
    });
    req.end(call.body);
  });
}

function response(res: IncomingMessage, signal: AbortSignal | undefined): HttpResponse {
  const status = res.statusCode ?? 0;
  let stream: NodeJS.ReadableStream = res;
  if (String(res.headers["content-encoding"] ?? "").toLowerCase() === "gzip") {
    // pipeline destroys both on an error of either, so the gunzip side fails with it
    stream = pipeline(res, createGunzip(), () => {});
  }
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of stream) yield chunk as Buffer;
    } catch (err) {
      // an abort surfaces as a reset socket: say it was the abort, as fetch does
      throw signal?.aborted ? signal.reason : err;
    }
  }
  const body = chunks();
  return {
    status,
    ok: status >= 200 && status < 300,
    body,
    async text() {
      const all: Buffer[] = [];
      for await (const chunk of body) all.push(chunk);
      return Buffer.concat(all).toString("utf8");
    },
  };
}
