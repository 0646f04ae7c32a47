// HttpResolver against real HTTP and HTTPS servers on loopback (the HTTPS one
// under a private CA): params in, the Resolved (or the ResolutionError the
// request would show) out. Secrets come from an in-memory reader; which
// requests and Authorization headers reached the servers is recorded.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { makePrivateCa, type PrivateCa } from "@quarry/devcluster/private-ca";
import { type Params, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import { HttpResolver } from "./resolver.ts";
import type { PasswordReader } from "./secret.ts";

const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: hello\n";
const sha = (algorithm: string) => createHash(algorithm).update(TASK).digest("hex");

interface Seen {
  path: string;
  authorization: string | undefined;
}
const seen: Seen[] = [];
const seenOther: Seen[] = [];
let otherBase = "";

function routes(req: IncomingMessage, res: ServerResponse): void {
  seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
  switch (req.url) {
    case "/task.yaml":
    case "/team/task.yaml":
      return void res.end(TASK);
    case "/private/task.yaml":
      if (req.headers.authorization !== `Basic ${Buffer.from("git:s3cret").toString("base64")}`)
        return void res.writeHead(401, { "www-authenticate": "Basic" }).end();
      return void res.end(TASK);
    case "/moved":
      return void res.writeHead(302, { location: "/task.yaml" }).end();
    case "/team/moved-out":
      return void res.writeHead(302, { location: "/elsewhere/task.yaml" }).end();
    case "/away":
      return void res.writeHead(302, { location: `${otherBase}/task.yaml` }).end();
    case "/huge":
      return void res.end(`${TASK}# ${"x".repeat(1024 * 1024)}\n`);
    case "/flaky":
      return void res.writeHead(503).end();
    case "/forbidden":
      return void res.writeHead(403).end();
    case "/empty":
      return void res.writeHead(204).end();
    default:
      res.writeHead(404).end();
  }
}

const plain = createHttpServer(routes);
let ca: PrivateCa;
let tls: ReturnType<typeof createHttpsServer>;
// another origin (127.0.0.3), which a redirect must never reach
const other = createHttpServer((req, res) => {
  seenOther.push({ path: req.url ?? "", authorization: req.headers.authorization });
  res.end(TASK);
});
let base = "";
let tlsBase = "";

before(async () => {
  ca = makePrivateCa({ ips: ["127.0.0.1"] });
  tls = createHttpsServer({ cert: ca.certPem, key: ca.keyPem }, routes);
  await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => tls.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => other.listen(0, "127.0.0.3", r));
  base = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  tlsBase = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  otherBase = `http://127.0.0.3:${(other.address() as AddressInfo).port}`;
});
after(() => {
  plain.close();
  tls.close();
  other.close();
});

/** Secrets of namespace team-a: name → data and annotations. */
const SECRETS: Record<string, { data: Record<string, string>; annotations: Record<string, string> }> = {
  "bound-creds": {
    data: { password: "s3cret", token: "s3cret" },
    annotations: { "quarry.dev/credential-urls": "" },
  },
  "unbound-creds": { data: { password: "s3cret" }, annotations: {} },
};
const readPassword: PasswordReader = async (namespace, name, key) => {
  const s = namespace === "team-a" ? SECRETS[name] : undefined;
  if (!s) return { problem: `Secret ${namespace}/${name} not found` };
  const value = s.data[key];
  if (value === undefined) return { problem: `no key ${key}` };
  return { value, annotations: s.annotations };
};
const resolver = new HttpResolver({ readPassword });

const logged: { fields: Record<string, unknown>; msg: string }[] = [];
const ctx = (config: Record<string, string> = {}): ResolveContext =>
  ({
    signal: AbortSignal.timeout(20_000),
    namespace: "team-a",
    name: "rr",
    url: undefined,
    config: Object.freeze({ ...config }),
    span: { setAttribute: () => undefined },
    log: {
      warn: (fields: Record<string, unknown>, msg: string) => logged.push({ fields, msg }),
      debug: () => undefined,
    },
  }) as unknown as ResolveContext;

const resolve = (params: Params, config: Record<string, string> = {}) =>
  resolver.resolve(params, ctx(config));
const rejects = (params: Params, config: Record<string, string>, reason: string, message: RegExp | string) =>
  assert.rejects(resolve(params, config), (e) => {
    assert.ok(e instanceof ResolutionError, String(e));
    assert.equal(e.reason, reason, e.message);
    if (typeof message === "string") assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
const bindTo = (prefix: string) => {
  const creds = SECRETS["bound-creds"];
  if (creds) creds.annotations["quarry.dev/credential-urls"] = prefix;
};

test("plain HTTP: the body, Tekton's refSource (url, sha256 of the content) and the url annotation", async () => {
  const url = `${base}/task.yaml`;
  const r = await resolve({ url });
  assert.equal(Buffer.from(r.data).toString(), TASK);
  assert.deepEqual(r.refSource, { uri: url, digest: { sha256: sha("sha256") } });
  assert.deepEqual(r.annotations, { "resolution.tekton.dev/url": url });
});

test("HTTPS under a private CA: trusted through ca-bundle; without it the certificate is refused, naming the host", async () => {
  const url = `${tlsBase}/task.yaml`;
  const r = await resolve({ url }, { "ca-bundle": ca.caPem });
  assert.equal(Buffer.from(r.data).toString(), TASK);
  await rejects(
    { url },
    {},
    "SourceUnavailable",
    /^param "url": .*127\.0\.0\.1.*unknown authority|self-signed/,
  );
});

test("digest: sha256 and sha512 matching the content resolve; a mismatch is DigestMismatch naming both", async () => {
  const url = `${base}/task.yaml`;
  for (const algorithm of ["sha256", "sha512"]) {
    const r = await resolve({ url, digest: `${algorithm}:${sha(algorithm)}` });
    assert.equal(Buffer.from(r.data).toString(), TASK);
    assert.equal(r.refSource?.digest.sha256, sha("sha256"), "refSource keeps the sha256 of the content");
    const wrong = algorithm === "sha256" ? "0".repeat(64) : "0".repeat(128);
    await rejects(
      { url, digest: `${algorithm}:${wrong}` },
      {},
      "DigestMismatch",
      `param "digest": the content of ${url} has ${algorithm}:${sha(algorithm)}, not ${algorithm}:${wrong}`,
    );
  }
  await rejects(
    { url, digest: "sha256:abc" },
    {},
    "InvalidParams",
    /^param "digest": a sha256 digest has 64/,
  );
});

test("only a digest makes a request immutable (cached in auto mode)", () => {
  assert.equal(resolver.isImmutable({ url: `${base}/task.yaml`, digest: `sha256:${sha("sha256")}` }), true);
  assert.equal(resolver.isImmutable({ url: `${base}/task.yaml` }), false);
});

test("Basic auth with a bound Secret, over HTTPS and over plain http to an insecure host", async () => {
  const auth = { "http-username": "git", "http-password-secret": "bound-creds" };
  const expected = `Basic ${Buffer.from("git:s3cret").toString("base64")}`;
  bindTo(`${tlsBase}/private`);
  seen.length = 0;
  const r = await resolve({ url: `${tlsBase}/private/task.yaml`, ...auth }, { "ca-bundle": ca.caPem });
  assert.equal(Buffer.from(r.data).toString(), TASK);
  assert.deepEqual(seen, [{ path: "/private/task.yaml", authorization: expected }]);

  bindTo(`${base}/private`);
  seen.length = 0;
  const key = { "http-password-secret-key": "token" };
  const insecure = { "insecure-hosts": "127.0.0.1" };
  await resolve({ url: `${base}/private/task.yaml`, ...auth, ...key }, insecure);
  assert.deepEqual(seen, [{ path: "/private/task.yaml", authorization: expected }]);
});

test("an unbound, missing or keyless Secret: one Forbidden message naming the Secret and the origin; nothing is sent", async () => {
  bindTo(`${base}/team`);
  const insecure = { "insecure-hosts": "127.0.0.1" };
  const url = `${base}/private/task.yaml`;
  const message = (secret: string, key = "password") =>
    `param "http-password-secret": Secret team-a/${secret} key "${key}" cannot be used as an http password for ${base}: it is missing, empty or unreadable by the http resolver, or not bound to this URL (the resolver's log says which)`;
  seen.length = 0;
  logged.length = 0;
  for (const [secret, key] of [
    ["unbound-creds", "password"],
    ["bound-creds", "password"], // bound, but to /team only
    ["missing", "password"],
    ["bound-creds", "nope"],
  ] as const) {
    await rejects(
      { url, "http-username": "git", "http-password-secret": secret, "http-password-secret-key": key },
      insecure,
      "Forbidden",
      message(secret, key),
    );
  }
  assert.deepEqual(seen, [], "the server heard nothing");
  assert.equal(logged.length, 4);
  assert.match(String(logged[0]?.fields.problem), /is not bound to/);
  assert.ok(!JSON.stringify(logged).includes("s3cret"), "the password is never logged");
});

test("a password over plain http only to insecure-hosts, and a redirect out of the bound prefix is not followed", async () => {
  bindTo(`${base}/team`);
  const auth = { "http-username": "git", "http-password-secret": "bound-creds" };
  seen.length = 0;
  await rejects(
    { url: `${base}/team/task.yaml`, ...auth },
    {},
    "Forbidden",
    `param "url": refusing to send the http password to ${base} over plain http: use https, or list the host in insecure-hosts in http-resolver-config`,
  );
  assert.equal(seen.length, 0, "nothing sent");
  const insecure = { "insecure-hosts": "127.0.0.1" };
  await rejects(
    { url: `${base}/team/moved-out`, ...auth },
    insecure,
    "Forbidden",
    /Secret team-a\/bound-creds/,
  );
  assert.deepEqual(
    seen.map((s) => s.path),
    ["/team/moved-out"],
    "the unbound target was never asked",
  );
});

test("status codes: 404 NotFound, 401/403 Forbidden, 503 transient, 204 SourceUnavailable", async () => {
  await rejects(
    { url: `${base}/nope.yaml` },
    {},
    "NotFound",
    `param "url": ${base}/nope.yaml answered 404 Not Found`,
  );
  await rejects(
    { url: `${base}/private/task.yaml` },
    {},
    "Forbidden",
    /answered 401 \(the server wants credentials/,
  );
  await rejects({ url: `${base}/forbidden` }, {}, "Forbidden", /answered 403$/);
  await rejects({ url: `${base}/empty` }, {}, "SourceUnavailable", /answered 204; only 200 is accepted$/);
  await assert.rejects(resolve({ url: `${base}/flaky` }), (e) => !(e instanceof ResolutionError));
});

test("a body over 1 MiB is cut off: TooLarge naming the param", async () => {
  await rejects({ url: `${base}/huge` }, {}, "TooLarge", /^param "url": .*\/huge is over the 1 MiB limit/);
});

test("redirects: followed within the origin, refused to another one (which never hears of it)", async () => {
  const r = await resolve({ url: `${base}/moved` });
  assert.equal(Buffer.from(r.data).toString(), TASK);
  seenOther.length = 0;
  await rejects(
    { url: `${base}/away` },
    {},
    "Forbidden",
    `param "url": redirected from ${base} to another origin ${otherBase}; not followed`,
  );
  assert.deepEqual(seenOther, []);
});

test("blocked networks: a name resolving to a blocked address, and the metadata address, are refused before connecting", async () => {
  const port = new URL(base).port;
  seen.length = 0;
  await rejects(
    { url: `http://localhost:${port}/task.yaml` },
    { "blocked-networks": "default, 127.0.0.1/32" },
    "Forbidden",
    'param "url": refusing to connect to localhost: it resolves to 127.0.0.1, in 127.0.0.1/32, which blocked-networks blocks',
  );
  assert.deepEqual(seen, []);
  await rejects({ url: "http://169.254.169.254/latest/meta-data/" }, {}, "Forbidden", /^param "url": /);
});
