// The hostile world's egress part (rows in cases-egress.ts): the git and
// bundle resolvers get `blocked-networks: default, 127.0.0.1/32` (the world's
// git server and registry listen on 127.0.0.2, so only the traps are on
// 127.0.0.1); capture servers on 127.0.0.1 (blocked: reached by a name that
// resolves there, `localhost`) and on 127.0.0.3 (another origin); a git
// server that redirects to that other origin; and a registry whose Bearer
// realm names the blocked address; for git API mode, a forge API capture on
// 127.0.0.1 reached as `https://localhost:PORT` and a request token Secret
// bound to exactly that server, so that only the resolved-address check stands
// between the token and the trap. After the sweep (egressCaptureTest) no
// capture server has seen a single connection.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { mergeConfig, type Scenario } from "@quarry/harness/scenario";
import { CREDENTIAL_URLS_ANNOTATION } from "@quarry/resolver-sdk";
import type { HostileWorld } from "./fixture.ts";

/** What the resolvers of the hostile world may not connect to, besides the default list. */
export const HOSTILE_BLOCKED_NETWORKS = "default, 127.0.0.1/32";
/** Where the world's real git server and registry listen (not blocked). */
export const SOURCE_ADDRESS = "127.0.0.2";

/** What the egress rows need from the world. */
export interface EgressCtx {
  /** http://localhost:PORT/x.git: localhost resolves to 127.0.0.1, where a capture server listens. */
  blockedNameUrl: string;
  /** http://127.0.0.2:PORT/x.git, answering 302 to a capture server on 127.0.0.3. */
  crossOriginRedirectUrl: string;
  /** A bundle on a registry (127.0.0.2) whose Bearer realm is http://localhost:PORT/token (a capture). */
  blockedRealmBundle: string;
  /** https://localhost:PORT: a forge API server by a name resolving to 127.0.0.1, where a capture listens. */
  blockedNameServerUrl: string;
  /** A token Secret in the request's namespace bound (quarry.dev/credential-urls) to blockedNameServerUrl. */
  blockedNameTokenSecret: string;
}

const BLOCKED_NAME_TOKEN_SECRET = "localhost-api-creds";

interface Listener {
  readonly name: string;
  readonly origin: string;
  readonly connections: number;
  close(): Promise<void>;
}

export interface EgressWorld {
  ctx: EgressCtx;
  /** Servers no resolver may ever reach. */
  captures: Listener[];
  dispose(): Promise<void>;
}

async function listen(
  name: string,
  address: string,
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Listener> {
  let connections = 0;
  const server: Server = createServer(answer);
  server.on("connection", () => {
    connections++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => resolve());
  });
  const origin = `http://${address}:${(server.address() as AddressInfo).port}`;
  return {
    name,
    origin,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts the traps and merges blocked-networks into git-resolver-config and
 * bundleresolver-config (whatever else they hold stays). Call before those resolvers start.
 */
export async function startEgressWorld(scn: Scenario, apiToken: string): Promise<EgressWorld> {
  const all: Listener[] = [];
  const dispose = async () => {
    await Promise.all(all.map((l) => l.close()));
  };
  try {
    const capture = (_req: IncomingMessage, res: ServerResponse) =>
      res.writeHead(401, { "www-authenticate": 'Basic realm="capture"' }).end();
    const gitTrap = await listen("git capture on 127.0.0.1", "127.0.0.1", capture);
    const realmTrap = await listen("token realm capture on 127.0.0.1", "127.0.0.1", capture);
    const apiTrap = await listen("forge API capture on 127.0.0.1", "127.0.0.1", capture);
    const otherOrigin = await listen("other origin on 127.0.0.3", "127.0.0.3", capture);
    const redirector = await listen("redirecting git server", SOURCE_ADDRESS, (_req, res) =>
      res.writeHead(302, { location: `${otherOrigin.origin}/x.git/info/refs?service=git-upload-pack` }).end(),
    );
    const realmPort = new URL(realmTrap.origin).port;
    const registry = await listen("registry with a blocked realm", SOURCE_ADDRESS, (_req, res) =>
      res
        .writeHead(401, {
          "www-authenticate": `Bearer realm="http://localhost:${realmPort}/token",service="hostile"`,
          "content-type": "application/json",
        })
        .end('{"errors":[{"code":"UNAUTHORIZED"}]}'),
    );
    all.push(gitTrap, realmTrap, apiTrap, otherOrigin, redirector, registry);
    const blockedNameServerUrl = `https://localhost:${new URL(apiTrap.origin).port}`;
    await applyObject(scn.admin, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: BLOCKED_NAME_TOKEN_SECRET,
        namespace: scn.namespace,
        annotations: { [CREDENTIAL_URLS_ANNOTATION]: `${blockedNameServerUrl}/` },
      },
      stringData: { token: apiToken },
    });
    for (const name of ["git-resolver-config", "bundleresolver-config"])
      await mergeConfig(scn, name, { "blocked-networks": HOSTILE_BLOCKED_NETWORKS });
    return {
      ctx: {
        blockedNameUrl: `http://localhost:${new URL(gitTrap.origin).port}/x.git`,
        crossOriginRedirectUrl: `${redirector.origin}/x.git`,
        blockedRealmBundle: `${new URL(registry.origin).host}/hostile/realm:v1`,
        blockedNameServerUrl,
        blockedNameTokenSecret: BLOCKED_NAME_TOKEN_SECRET,
      },
      captures: [gitTrap, realmTrap, apiTrap, otherOrigin],
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** After the sweep: the blocked address and the other origin were never connected to. */
export function egressCaptureTest(world: () => HostileWorld): void {
  test("no resolver connected to a blocked address or followed a redirect to another origin", () => {
    const contacted = world()
      .egress.captures.filter((c) => c.connections > 0)
      .map((c) => `${c.name} (${c.origin}): ${c.connections} connections`);
    assert.deepEqual(contacted, []);
  });
}
