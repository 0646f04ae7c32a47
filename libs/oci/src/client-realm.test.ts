// The token flow's realm binding against real servers on loopback: a
// registry on 127.0.0.2 and token realms on 127.0.0.3 (another host) and on
// the registry's own host and port. The realms record every Authorization
// header they receive; only a bound realm may ever see the credential.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";
import { RegistryClient, type WithheldCredential } from "./client.ts";
import { RegistryError } from "./errors.ts";

const CREDENTIAL = { username: "u", password: "realm-test-password" };
const BASIC = `Basic ${Buffer.from("u:realm-test-password").toString("base64")}`;
const MANIFEST = JSON.stringify({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: `sha256:${"0".repeat(64)}`,
    size: 2,
  },
  layers: [],
});

interface Recorder {
  server: Server;
  host: string;
  /** The Authorization header of every request, "" when absent. */
  auth: string[];
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

async function recorder(address: string): Promise<Recorder> {
  const r: Recorder = { server: createServer(), host: "", auth: [], handler: (_q, res) => res.end() };
  r.server.on("request", (req, res) => {
    r.auth.push(req.headers.authorization ?? "");
    r.handler(req, res);
  });
  await new Promise<void>((ok) => r.server.listen(0, address, ok));
  r.host = `${address}:${(r.server.address() as AddressInfo).port}`;
  return r;
}

/** A token service: a credentialed request gets "tok-user", an anonymous one "tok-anon" (or 401 when `anonymous` is false). */
function tokenService(anonymous = true) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const user = req.headers.authorization === BASIC;
    if (!user && !anonymous) return res.writeHead(401).end();
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ token: user ? "tok-user" : "tok-anon", expires_in: 300 }));
  };
}

let registry: Recorder;
let realm: Recorder;
/** Which tokens the registry accepts for the manifest (a public repository accepts the anonymous one). */
let accepted: string[] = [];
let realmUrl = "";

before(async () => {
  registry = await recorder("127.0.0.2");
  realm = await recorder("127.0.0.3");
  registry.handler = (req, res) => {
    if (req.url?.startsWith("/token")) return tokenService()(req, res);
    if (!accepted.some((t) => req.headers.authorization === `Bearer ${t}`)) {
      return res.writeHead(401, { "www-authenticate": `Bearer realm="${realmUrl}",service="reg"` }).end();
    }
    res.writeHead(200, { "content-type": "application/vnd.oci.image.manifest.v1+json" }).end(MANIFEST);
  };
});
after(async () => {
  for (const r of [registry, realm]) await new Promise<void>((ok) => r.server.close(() => ok()));
});
beforeEach(() => {
  registry.auth.length = 0;
  realm.auth.length = 0;
  realm.handler = tokenService();
  realmUrl = `http://${realm.host}/token`;
  accepted = ["tok-user"];
});

const repo = () => ({ registry: registry.host, repository: "team/b" });

test("a realm on another host gets no Authorization; a private repository fails 401 saying the credential was withheld", async () => {
  const withheld: WithheldCredential[] = [];
  const client = new RegistryClient();
  await assert.rejects(
    client.getManifest(repo(), "v1", {
      credential: CREDENTIAL,
      onCredentialWithheld: (w) => withheld.push(w),
    }),
    (e: unknown) => {
      assert.ok(e instanceof RegistryError);
      assert.equal(e.code, "unauthorized");
      assert.equal(
        e.message,
        `${registry.host}/team/b: manifests v1: the registry requires credentials (401); credentials for ${registry.host} were not sent to token realm ${realm.host} (not bound to it; see token-realm-hosts)`,
      );
      return true;
    },
  );
  assert.deepEqual(realm.auth, [""]);
  assert.ok(!registry.auth.includes(BASIC));
  assert.deepEqual(withheld, [{ registry: registry.host, realm: realm.host }]);
});

test("a public repository behind an unbound realm still pulls with the anonymous token", async () => {
  accepted = ["tok-anon"];
  const fetched = await new RegistryClient().getManifest(repo(), "v1", { credential: CREDENTIAL });
  assert.equal(fetched.manifest.kind, "image");
  assert.deepEqual(realm.auth, [""]);
  assert.equal(registry.auth.at(-1), "Bearer tok-anon");
});

test("an unbound realm that refuses anonymous access: the message says the credential was withheld", async () => {
  realm.handler = tokenService(false);
  await assert.rejects(
    new RegistryClient().resolve(repo(), "v1", { credential: CREDENTIAL }),
    (e: unknown) =>
      e instanceof RegistryError &&
      e.code === "unauthorized" &&
      e.message ===
        `${registry.host}/team/b: the token service refused anonymous access (401); credentials for ${registry.host} were not sent to token realm ${realm.host} (not bound to it; see token-realm-hosts)`,
  );
  assert.deepEqual(realm.auth, [""]);
});

test("a realm on the registry's own host and port gets the credential", async () => {
  realmUrl = `http://${registry.host}/token`;
  const withheld: WithheldCredential[] = [];
  const fetched = await new RegistryClient().getManifest(repo(), "v1", {
    credential: CREDENTIAL,
    onCredentialWithheld: (w) => withheld.push(w),
  });
  assert.equal(fetched.manifest.kind, "image");
  assert.deepEqual(registry.auth, ["", BASIC, "Bearer tok-user"]);
  assert.deepEqual(realm.auth, []);
  assert.deepEqual(withheld, []);
});

test("a realm the operator pairs with the registry gets the credential, from the next call on", async () => {
  let pairs: { registry: string; realm: string }[] = [];
  const client = new RegistryClient({ tokenRealmHosts: () => pairs });
  await assert.rejects(
    client.getManifest(repo(), "v1", { credential: CREDENTIAL }),
    /not sent to token realm/,
  );
  assert.deepEqual(realm.auth, [""]);
  // live config: the anonymous token cached for the first call is not the credential's
  pairs = [{ registry: registry.host, realm: realm.host }];
  const fetched = await client.getManifest(repo(), "v1", { credential: CREDENTIAL });
  assert.equal(fetched.manifest.kind, "image");
  assert.deepEqual(realm.auth, ["", BASIC]);
});

test("a pair for another port of the realm host does not bind it", async () => {
  const other = { registry: registry.host, realm: "127.0.0.3:1" };
  await assert.rejects(
    new RegistryClient({ tokenRealmHosts: () => [other] }).getManifest(repo(), "v1", {
      credential: CREDENTIAL,
    }),
    /not sent to token realm/,
  );
  assert.deepEqual(realm.auth, [""]);
});
