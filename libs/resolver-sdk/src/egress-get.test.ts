import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { EgressDispatchers, NO_EGRESS } from "./egress.ts";
import { egressGet, httpStatusError } from "./egress-get.ts";
import { ResolutionError } from "./errors.ts";

let server: Server;
let origin = "";
const seen: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization ?? "-"}`);
    if (req.url === "/ok") res.end("hello");
    else if (req.url === "/hop") res.writeHead(302, { location: "/ok" }).end();
    else if (req.url === "/away") res.writeHead(302, { location: "http://localhost:1/x" }).end();
    else if (req.url === "/big") res.end("x".repeat(100));
    else res.writeHead(Number(req.url?.slice(1)) || 500).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const get = (path: string, extra: Partial<Parameters<typeof egressGet>[1]> = {}) =>
  egressGet(new URL(path, origin), {
    egress: () => NO_EGRESS,
    dispatchers: new EgressDispatchers(),
    signal: AbortSignal.timeout(5000),
    at: `param "url": ${path}`,
    ...extra,
  });

test("a 200 answer's body; every hop of a same-origin redirect is shown to beforeEach first", async () => {
  const hops: string[] = [];
  const body = await get("/hop", {
    headers: { authorization: "t" },
    beforeEach: (u) => hops.push(u.pathname),
  });
  assert.equal(Buffer.from(body).toString(), "hello");
  assert.deepEqual(hops, ["/hop", "/ok"]);
  assert.deepEqual(seen.slice(-2), ["/hop t", "/ok t"]);
});

test("beforeEach throwing stops the request before it is sent", async () => {
  const before = seen.length;
  await assert.rejects(
    get("/ok", {
      beforeEach: () => {
        throw new ResolutionError("Forbidden", "not bound");
      },
    }),
    { reason: "Forbidden", message: "not bound" },
  );
  assert.equal(seen.length, before, "nothing reached the server");
});

test("a redirect to another origin is refused Forbidden, prefixed by refusedAt", async () => {
  await assert.rejects(get("/away", { refusedAt: 'param "serverURL"' }), (err: ResolutionError) => {
    assert.equal(err.reason, "Forbidden");
    assert.match(err.message, /^param "serverURL": /);
    return true;
  });
});

test("non-200 answers by httpStatusError, or the caller's statusError; a body over the cap is TooLarge", async () => {
  await assert.rejects(get("/404"), {
    reason: "NotFound",
    message: 'param "url": /404 answered 404 Not Found',
  });
  await assert.rejects(get("/403"), { reason: "Forbidden" });
  await assert.rejects(get("/503"), (err: Error) => !(err instanceof ResolutionError));
  await assert.rejects(
    get("/404", { statusError: (s) => new ResolutionError("InvalidParams", `got ${s}`) }),
    {
      reason: "InvalidParams",
      message: "got 404",
    },
  );
  await assert.rejects(get("/big", { maxBytes: 10 }), { reason: "TooLarge" });
});

test("httpStatusError: the reason for each answer", () => {
  const reason = (s: number) => {
    const e = httpStatusError(s, "at");
    return e instanceof ResolutionError ? e.reason : "transient";
  };
  assert.deepEqual([404, 410, 401, 403, 408, 429, 500, 503, 301, 418].map(reason), [
    "NotFound",
    "NotFound",
    "Forbidden",
    "Forbidden",
    "transient",
    "transient",
    "transient",
    "transient",
    "SourceUnavailable",
    "SourceUnavailable",
  ]);
  assert.equal(httpStatusError(401, "at", " (a hint)").message, "at answered 401 (a hint)");
});
