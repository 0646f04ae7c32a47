// A programmable HTTP server on loopback that counts hits per path, for
// tests of resolvers that fetch over HTTP (the example resolver).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Handler = (req: IncomingMessage, res: ServerResponse, hit: number) => void;

export interface HttpFixture {
  base: string;
  hits: Map<string, number>;
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export async function startHttpFixture(): Promise<HttpFixture> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    const handler = routes.get(path);
    if (handler) handler(req, res, n);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
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
