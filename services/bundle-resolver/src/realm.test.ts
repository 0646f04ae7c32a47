// The bundle resolver as main.ts wires it (the SDK's egressFetch, the live
// token-realm-hosts) against a registry on 127.0.0.2 whose Bearer realm is
// on 127.0.0.3: the pull Secret's credential never reaches the realm unless
// the operator pairs the two; the request fails Forbidden saying so, and the
// resolver's log names both hosts.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { DockerCredentials, RegistryClient } from "@quarry/oci";
import { egressFetch, ResolutionError, type ResolveContext } from "@quarry/resolver-sdk";
import { BundleResolver } from "./resolver.ts";

const USER = { username: "u", password: "realm-registry-password" };
const BASIC = `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString("base64")}`;

interface Recorder {
  server: Server;
  host: string;
  auth: string[];
}

async function recorder(address: string, answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const r: Recorder = { server: createServer(), host: "", auth: [] };
  r.server.on("request", (req, res) => {
    r.auth.push(req.headers.authorization ?? "");
    answer(req, res);
  });
  await new Promise<void>((ok) => r.server.listen(0, address, ok));
  r.host = `${address}:${(r.server.address() as AddressInfo).port}`;
  return r;
}

let registry: Recorder;
let realm: Recorder;
before(async () => {
  // the realm grants an anonymous token; the registry (a private repository) accepts none
  realm = await recorder("127.0.0.3", (_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end('{"token":"anon","expires_in":60}'),
  );
  registry = await recorder("127.0.0.2", (_req, res) =>
    res.writeHead(401, { "www-authenticate": `Bearer realm="http://${realm.host}/token",service="r"` }).end(),
  );
});
after(async () => {
  for (const r of [registry, realm]) await new Promise<void>((ok) => r.server.close(() => ok()));
});

function world(config: Record<string, string>) {
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  const resolver: BundleResolver = new BundleResolver({
    registry: new RegistryClient({
      tokenRealmHosts: () => resolver.tokenRealmHosts(),
      fetch: egressFetch(() => resolver.egress()),
    }),
    loadCredentials: async () => {
      const credentials = new DockerCredentials();
      credentials.add(JSON.stringify({ auths: { [registry.host]: USER } }), "Secret ns/pull");
      return { credentials, sources: ["Secret ns/pull"] };
    },
  });
  resolver.validateConfig(config);
  const ctx = {
    signal: AbortSignal.timeout(10_000),
    namespace: "ns",
    name: "r",
    config,
    log: {
      warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ fields, msg }),
      info() {},
      debug() {},
    },
  } as unknown as ResolveContext;
  return { resolver, ctx, warnings };
}

test("an unbound realm: asked anonymously, Forbidden saying why, the log names both hosts", async () => {
  realm.auth.length = 0;
  const { resolver, ctx, warnings } = world({});
  await assert.rejects(
    resolver.resolve({ bundle: `${registry.host}/team/b:v1`, name: "build", secret: "pull" }, ctx),
    (err: unknown) => {
      assert.ok(err instanceof ResolutionError, String(err));
      assert.equal(err.reason, "Forbidden");
      assert.equal(
        err.message,
        `param "bundle": ${registry.host}/team/b: manifests v1: the registry requires credentials (401); credentials for ${registry.host} were not sent to token realm ${realm.host} (not bound to it; see token-realm-hosts) (from Secret ns/pull)`,
      );
      return true;
    },
  );
  assert.deepEqual(realm.auth, [""]);
  assert.ok(!registry.auth.includes(BASIC));
  assert.deepEqual(
    warnings.map((w) => w.fields),
    [{ registry: registry.host, realm: realm.host }],
  );
  assert.match(warnings[0]?.msg ?? "", /pull credential withheld/);
});

test("a realm paired in token-realm-hosts gets the credential", async () => {
  realm.auth.length = 0;
  const { resolver, ctx, warnings } = world({ "token-realm-hosts": `${registry.host}=${realm.host}` });
  await assert.rejects(
    resolver.resolve({ bundle: `${registry.host}/team/b:v1`, name: "build", secret: "pull" }, ctx),
    (err: unknown) =>
      err instanceof ResolutionError &&
      err.reason === "Forbidden" &&
      /the registry refused the credentials \(401\) \(from Secret ns\/pull\)$/.test(err.message),
  );
  assert.deepEqual(realm.auth, [BASIC]);
  assert.deepEqual(warnings, []);
});
