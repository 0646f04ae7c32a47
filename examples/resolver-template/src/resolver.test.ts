import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { ResolveContext } from "@quarry/resolver-sdk";
import { configKeyWarnings, ResolutionError } from "@quarry/resolver-sdk";
import { HttpResolver } from "./resolver.ts";

let base = "";
let connections = 0;
let elsewhere = "";
let elsewhereConnections = 0;
const server = createServer((req, res) => {
  if (req.url === "/task.yaml") return void res.end("apiVersion: tekton.dev/v1\nkind: Task\n");
  if (req.url === "/secret") return void res.writeHead(403).end();
  if (req.url === "/flaky") return void res.writeHead(503).end();
  if (req.url === "/moved") return void res.writeHead(302, { location: "/task.yaml" }).end();
  if (req.url === "/away") return void res.writeHead(302, { location: `${elsewhere}/task.yaml` }).end();
  if (req.url === "/huge") return void res.end(`kind: Task\n# ${"x".repeat(2 * 1024 * 1024)}\n`);
  res.writeHead(404).end();
});
server.on("connection", () => connections++);
// another origin (127.0.0.3), which a redirect must never reach
const other = createServer((_req, res) => res.end("apiVersion: tekton.dev/v1\nkind: Task\n"));
other.on("connection", () => elsewhereConnections++);
before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((r) => other.listen(0, "127.0.0.3", r));
  elsewhere = `http://127.0.0.3:${(other.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
  other.close();
});

const ctx = (config: Record<string, string> = {}): ResolveContext =>
  ({
    signal: new AbortController().signal,
    namespace: "ns",
    name: "r",
    url: undefined,
    config,
  }) as unknown as ResolveContext;

test("fetches the file and pins its digest", async () => {
  const r = await new HttpResolver().resolve({ url: `${base}/task.yaml` }, ctx());
  assert.match(Buffer.from(r.data).toString(), /kind: Task/);
  assert.equal(r.refSource?.uri, `${base}/task.yaml`);
  assert.match(r.refSource?.digest.sha256 ?? "", /^[0-9a-f]{64}$/);
});

test("404 and 403 are terminal with Quarry reasons; 503 is transient", async () => {
  const resolver = new HttpResolver();
  await assert.rejects(
    resolver.resolve({ url: `${base}/nope` }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "NotFound",
  );
  await assert.rejects(
    resolver.resolve({ url: `${base}/secret` }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "Forbidden",
  );
  await assert.rejects(
    resolver.resolve({ url: `${base}/flaky` }, ctx()),
    (e) => !(e instanceof ResolutionError),
  );
});

test("a host resolving to a blocked address is refused, naming it and the key; nothing connects", async () => {
  // the operator also blocks 127.0.0.1; localhost resolves there
  const config = { "blocked-networks": "default, 127.0.0.1/32" };
  const port = new URL(base).port;
  const before = connections;
  await assert.rejects(
    new HttpResolver().resolve({ url: `http://localhost:${port}/task.yaml` }, ctx(config)),
    (e) =>
      e instanceof ResolutionError &&
      e.reason === "Forbidden" &&
      e.message ===
        'param "url": refusing to connect to localhost: it resolves to 127.0.0.1, in 127.0.0.1/32, which blocked-networks blocks',
  );
  assert.equal(connections, before);
});

test("redirects: followed within the origin, refused to another one (which never hears of it)", async () => {
  const resolver = new HttpResolver();
  const r = await resolver.resolve({ url: `${base}/moved` }, ctx());
  assert.match(Buffer.from(r.data).toString(), /kind: Task/);
  await assert.rejects(
    resolver.resolve({ url: `${base}/away` }, ctx()),
    (e) =>
      e instanceof ResolutionError &&
      e.reason === "Forbidden" &&
      e.message === `param "url": redirected from ${base} to another origin ${elsewhere}; not followed`,
  );
  assert.equal(elsewhereConnections, 0);
});

test("a body over 1 MiB is cut off: TooLarge", async () => {
  await assert.rejects(
    new HttpResolver().resolve({ url: `${base}/huge` }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "TooLarge",
  );
});

test("a link-local metadata address is refused before any lookup; a bad key fails the config", async () => {
  const resolver = new HttpResolver();
  await assert.rejects(
    resolver.resolve({ url: "http://169.254.169.254/latest/meta-data/" }, ctx()),
    (e) => e instanceof ResolutionError && e.reason === "Forbidden",
  );
  assert.throws(
    () => resolver.validateConfig({ "blocked-networks": "10.0.0.0/8" }),
    /blocked-networks: .*add "default"/,
  );
});

test("the template declares its keys: the egress keys pass, any other key is reported", () => {
  const keys = new HttpResolver().configKeys;
  assert.deepEqual(
    configKeyWarnings({ proxy: "", "ca-bundle": "", "resolution-timeout": "5s" }, "http", keys),
    [],
  );
  assert.deepEqual(
    configKeyWarnings({ "fetch-timeout": "1m" }, "http", keys).map((w) => [w.key, w.reason]),
    [["fetch-timeout", "UnknownConfigKey"]],
  );
});
