// The hostile world's credential-binding part (rows in cases-credentials.ts):
// two capture servers on 127.0.0.3 that record every connection and every
// Authorization header, git-resolver-config's `insecure-hosts` (the fixture git
// server and the first capture port) and `credential-bindings` (wrong-creds to
// the private repository, git-creds to the second capture port), and a Secret
// with an empty token. After the sweep the captures must have seen nothing.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { applyObject } from "@quarry/devcluster/apply";
import type { GitServer } from "@quarry/devcluster/git-server";
import { mergeConfig, type Scenario } from "@quarry/harness/scenario";

/** 127.0.0.3: neither the git server's nor the registry's address, and never blocked for them. */
export const CAPTURE_ADDRESS = "127.0.0.3";

export interface CaptureServer {
  /** http://127.0.0.3:PORT */
  readonly baseUrl: string;
  /** TCP connections accepted so far (a refused credential must not even open one). */
  readonly connections: number;
  /** Every request: method, path and Authorization header, oldest first. */
  readonly requests: readonly { method: string; path: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

/** An http server that answers every request 401 with a Basic challenge (luring credentials) and records it. */
export async function startCaptureServer(address = CAPTURE_ADDRESS): Promise<CaptureServer> {
  const requests: { method: string; path: string; authorization: string | undefined }[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    requests.push({
      method: req.method ?? "",
      path: req.url ?? "",
      authorization: req.headers.authorization,
    });
    res.writeHead(401, { "www-authenticate": 'Basic realm="capture"' }).end();
  });
  server.on("connection", () => {
    connections++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${address}:${port}`,
    get connections() {
      return connections;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the credential rows need from the world. */
export interface CredentialCtx {
  /** A repository URL on a capture server whose host:port is in insecure-hosts; git-creds is not bound to it. */
  unboundUrl: string;
  /** A repository URL on a capture server not in insecure-hosts; git-creds is bound to it (by config). */
  plainHttpUrl: string;
}

export interface CredentialWorld {
  ctx: CredentialCtx;
  captures: CaptureServer[];
  dispose(): Promise<void>;
}

/**
 * Starts the captures and writes the credential keys into git-resolver-config, merged into
 * whatever the ConfigMap already holds (other parts of the world write it too). Call before the
 * git resolver starts.
 */
export async function startCredentialWorld(scn: Scenario, server: GitServer): Promise<CredentialWorld> {
  const captures: CaptureServer[] = [];
  const dispose = async () => {
    await Promise.all(captures.map((c) => c.close()));
  };
  try {
    captures.push(await startCaptureServer(), await startCaptureServer());
    const [unbound, plain] = captures as [CaptureServer, CaptureServer];
    const ctx: CredentialCtx = {
      unboundUrl: `${unbound.baseUrl}/team/private.git`,
      plainHttpUrl: `${plain.baseUrl}/team/private.git`,
    };
    const ns = scn.namespace;
    const privateUrl = server.url("team/private.git");
    await mergeConfig(scn, "git-resolver-config", {
      "insecure-hosts": [new URL(server.baseUrl).host, new URL(unbound.baseUrl).host].join(", "),
      "credential-bindings": JSON.stringify([
        { namespace: ns, secret: "wrong-creds", urls: [literalPattern(privateUrl)] },
        { namespace: ns, secret: "git-creds", urls: [literalPattern(ctx.plainHttpUrl)] },
        { namespace: ns, secret: "empty-creds", urls: [literalPattern(privateUrl)] },
      ]),
    });
    await applyObject(scn.admin, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "empty-creds", namespace: ns },
      stringData: { token: "" },
    });
    return { ctx, captures, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

function literalPattern(url: string): string {
  return url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
