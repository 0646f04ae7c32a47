import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { ResolveContext } from "@quarry/resolver-sdk";
import { ResolutionError } from "@quarry/resolver-sdk";
import { HttpResolver } from "./resolver.ts";

let base = "";
const server = createServer((req, res) => {
  if (req.url === "/task.yaml") return void res.end("apiVersion: tekton.dev/v1\nkind: Task\n");
  if (req.url === "/secret") return void res.writeHead(403).end();
  if (req.url === "/flaky") return void res.writeHead(503).end();
  res.writeHead(404).end();
});
before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const ctx = (): ResolveContext =>
  ({
    signal: new AbortController().signal,
    namespace: "ns",
    name: "r",
    url: undefined,
    config: {},
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
