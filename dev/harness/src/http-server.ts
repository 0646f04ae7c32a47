// A programmable HTTP(S) server on loopback that counts hits per path and
// records each request's Authorization header, for tests of resolvers that
// fetch over HTTP (the example resolver, the http resolver).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";

export type Handler = (req: IncomingMessage, res: ServerResponse, hit: number) => void;

export interface HttpFixture {
  base: string;
  hits: Map<string, number>;
  /** Every request in arrival order: its path and Authorization header (undefined when none). */
  requests: { path: string; authorization: string | undefined }[];
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export interface HttpFixtureOptions {
  /** Listen address (default 127.0.0.1). */
  address?: string;
  /** Serve HTTPS with this certificate (a private CA's, dev/devcluster private-ca.ts). */
  tls?: { cert: string; key: string };
}

export async function startHttpFixture(opts: HttpFixtureOptions = {}): Promise<HttpFixture> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const requests: HttpFixture["requests"] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ path, authorization: req.headers.authorization });
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    const handler = routes.get(path);
    if (handler) handler(req, res, n);
    else res.writeHead(404).end();
  };
  const server = opts.tls ? createTlsServer(opts.tls, listener) : createServer(listener);
  const address = opts.address ?? "127.0.0.1";
  await new Promise<void>((r) => server.listen(0, address, r));
  return {
    base: `${opts.tls ? "https" : "http"}://${address}:${(server.address() as AddressInfo).port}`,
    hits,
    requests,
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const task = (name: string) =>
  `apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: ${name}\nspec:\n  steps: []\n`;
