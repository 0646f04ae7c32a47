// The hostile world's token-realm part (rows in cases-realm.ts): a registry on
// 127.0.0.2 that answers every request 401 with a Bearer challenge naming a
// realm on 127.0.0.3 (another host, paired with nothing in
// token-realm-hosts), a capture server as that realm, a dockerconfigjson
// Secret with a password for the registry, and the bundle resolver's opt-in
// credential rules in the namespace so it can read that Secret. After the
// sweep (realmCaptureTest) the realm was asked for a token, but never with an
// Authorization header or the password, and the resolver logged both hosts.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createPullSecret, grantCredentialAccess } from "@quarry/harness/bundle-scenario";
import type { Scenario } from "@quarry/harness/scenario";
import { type CaptureServer, startCaptureServer } from "./credentials-fixture.ts";
import { SOURCE_ADDRESS } from "./egress-fixture.ts";
import type { HostileWorld } from "./fixture.ts";

/** The pull Secret the realm rows name; it holds credentials for the registry only. */
export const REALM_SECRET = "realm-pull";

export interface RealmCtx {
  /** 127.0.0.2:PORT/hostile/private:v1 on the registry whose realm is the capture server. */
  bundle: string;
  secret: string;
}

export interface RealmWorld {
  ctx: RealmCtx;
  /** The registry's host:port and the realm capture server. */
  registryHost: string;
  realm: CaptureServer;
  /** Authorization headers the fake registry received ("" when none). */
  registryAuth: readonly string[];
  /** The password in the Secret, which neither server may ever receive. */
  password: string;
  dispose(): Promise<void>;
}

/** Starts the registry and the realm, writes the Secret and grants the credential rules. Call before the bundle resolver starts. */
export async function startRealmWorld(scn: Scenario, password: string): Promise<RealmWorld> {
  let registry: Server | undefined;
  let realm: CaptureServer | undefined;
  const dispose = async () => {
    await realm?.close();
    if (registry) {
      registry.closeAllConnections();
      await new Promise<void>((resolve) => registry?.close(() => resolve()));
    }
  };
  try {
    realm = await startCaptureServer();
    const realmUrl = `${realm.baseUrl}/token`;
    const registryAuth: string[] = [];
    registry = createServer((req, res) => {
      registryAuth.push(req.headers.authorization ?? "");
      res
        .writeHead(401, {
          "www-authenticate": `Bearer realm="${realmUrl}",service="x"`,
          "content-type": "application/json",
        })
        .end('{"errors":[{"code":"UNAUTHORIZED"}]}');
    });
    await new Promise<void>((resolve, reject) => {
      registry?.once("error", reject);
      registry?.listen(0, SOURCE_ADDRESS, () => resolve());
    });
    const registryHost = `${SOURCE_ADDRESS}:${(registry.address() as AddressInfo).port}`;
    await createPullSecret(scn, REALM_SECRET, registryHost, { username: "hostile", password });
    await grantCredentialAccess(scn);
    return {
      ctx: { bundle: `${registryHost}/hostile/private:v1`, secret: REALM_SECRET },
      registryHost,
      realm,
      registryAuth,
      password,
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** After the sweep: the unbound realm was asked, but never with the registry's credential. */
export function realmCaptureTest(world: () => HostileWorld): void {
  test("a token realm not bound to the registry never received its credential", () => {
    const { scn, realm } = world();
    const basic = Buffer.from(`hostile:${realm.password}`).toString("base64");
    const requests = realm.realm.requests;
    assert.ok(requests.length > 0, "the realm was never asked for a token");
    assert.deepEqual(
      requests.filter((r) => r.authorization !== undefined),
      [],
      "the realm got an Authorization header",
    );
    const seen = JSON.stringify([requests, realm.registryAuth]);
    assert.ok(!seen.includes(realm.password) && !seen.includes(basic), "the password reached a server");
    const log = scn.services.find((s) => s.name === "bundle-resolver")?.logs() ?? "";
    const withheld = log
      .split("\n")
      .filter((line) => line.includes("pull credential withheld"))
      .find(
        (line) =>
          line.includes(`"registry":"${realm.registryHost}"`) &&
          line.includes(`"realm":"${new URL(realm.realm.baseUrl).host}"`),
      );
    assert.ok(withheld, "the bundle resolver's log does not name the registry and the realm");
  });
}
