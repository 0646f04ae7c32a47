// The hostile world's http part (rows in cases-http.ts): a source server on
// 127.0.0.2 (a Task, a body over 1 MiB, a redirect to another origin), a
// capture on 127.0.0.3 that the password Secret is not bound to and that the
// redirect points at, and a trap on 127.0.0.1 (blocked: reached by the name
// `localhost`). http-resolver-config blocks 127.0.0.1/32 and lists both
// hosts in `insecure-hosts`, so a refused password is refused for its
// binding, not for plain http. After the sweep no capture has seen a
// connection, and no Authorization header went anywhere.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { applyObject } from "@quarry/devcluster/apply";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { mergeConfig, type Scenario } from "@quarry/harness/scenario";
import { type CaptureServer, startCaptureServer } from "./credentials-fixture.ts";
import { HOSTILE_BLOCKED_NETWORKS, SOURCE_ADDRESS } from "./egress-fixture.ts";
import type { HostileWorld } from "./fixture.ts";

const TASK = "apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: fetched\nspec:\n  steps: []\n";

/** What the http rows need from the world. */
export interface HttpCtx {
  /** http://127.0.0.2:PORT: the source the password Secret `http-creds` is bound to. */
  sourceBase: string;
  /** http://127.0.0.3:PORT: a capture the Secret is not bound to (its host is in insecure-hosts). */
  captureBase: string;
  /** http://localhost:PORT: a trap on 127.0.0.1, which blocked-networks blocks. */
  blockedNameBase: string;
  /** The sha256 of the source's /task.yaml. */
  taskSha256: string;
}

export interface HttpWorld {
  ctx: HttpCtx;
  captures: CaptureServer[];
  dispose(): Promise<void>;
}

/**
 * Starts the servers, writes http-resolver-config and the Secret `http-creds` (password
 * `password`), and opts the namespace in to the resolver reading Secrets. Call before the http
 * resolver starts.
 */
export async function startHttpWorld(scn: Scenario, password: string): Promise<HttpWorld> {
  const captures: CaptureServer[] = [];
  let source: Server | undefined;
  const dispose = async () => {
    await Promise.all(captures.map((c) => c.close()));
    source?.closeAllConnections();
    await new Promise<void>((r) => (source ? source.close(() => r()) : r()));
  };
  try {
    captures.push(await startCaptureServer(), await startCaptureServer("127.0.0.1"));
    const [capture, trap] = captures as [CaptureServer, CaptureServer];
    source = createServer((req, res) => {
      if (req.url === "/task.yaml") return void res.end(TASK);
      if (req.url === "/huge.yaml") return void res.end(`${TASK}# ${"x".repeat(1024 * 1024)}\n`);
      if (req.url === "/away")
        return void res.writeHead(302, { location: `${capture.baseUrl}/task.yaml` }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => source?.listen(0, SOURCE_ADDRESS, r));
    const sourceBase = `http://${SOURCE_ADDRESS}:${(source.address() as AddressInfo).port}`;
    await mergeConfig(scn, "http-resolver-config", {
      "blocked-networks": HOSTILE_BLOCKED_NETWORKS,
      "insecure-hosts": [new URL(sourceBase).host, new URL(capture.baseUrl).host].join(", "),
    });
    await applyObject(scn.admin, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "http-creds",
        namespace: scn.namespace,
        annotations: { "quarry.dev/credential-urls": `${sourceBase}/` },
      },
      stringData: { password },
    });
    await grantOptInRules(scn, {
      service: "http-resolver",
      rulesKey: "credentialRules",
      role: "quarry-http-resolver-credentials",
    });
    return {
      ctx: {
        sourceBase,
        captureBase: capture.baseUrl,
        blockedNameBase: `http://localhost:${new URL(trap.baseUrl).port}`,
        taskSha256: createHash("sha256").update(TASK).digest("hex"),
      },
      captures,
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** After the sweep: no http row reached the capture or the blocked trap. */
export function httpCaptureTest(world: () => HostileWorld): void {
  test("the http resolver sent no password to an unbound host, followed no redirect away, reached no blocked address", () => {
    const reached = world()
      .http.captures.filter((c) => c.connections > 0 || c.requests.length > 0)
      .map((c) => `${c.baseUrl}: ${c.connections} connections, ${JSON.stringify(c.requests)}`);
    assert.deepEqual(reached, []);
  });
}
