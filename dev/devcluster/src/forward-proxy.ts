// A real forward proxy for egress tests: tinyproxy (Debian's package, installed
// by scripts/env.sh) on 127.0.0.1, logging every request it is asked to pass,
// so a test can see which hosts went through it and what it saw of them: for
// https only `CONNECT host:port`, never a header.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { freePort } from "./controlplane.ts";

export interface ProxyRequest {
  /** CONNECT for a tunnel, else the plain-http method. */
  method: string;
  /** host:port of a CONNECT, the absolute URL of a plain-http request. */
  target: string;
}

export interface ForwardProxy {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  /** Requests the proxy was asked to pass (refused ones included), oldest first. */
  requests(): ProxyRequest[];
  /** The whole log, to assert what never appears in it (credentials). */
  rawLog(): string;
  stop(): Promise<void>;
}

export interface ForwardProxyOptions {
  /** Refuse every client (tinyproxy answers 403 Access denied), as an egress policy would. */
  refuse?: boolean;
}

export async function startForwardProxy(opts: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const dir = mkdtempSync(join(tmpdir(), "quarry-proxy-"));
  const port = await freePort();
  const logFile = join(dir, "tinyproxy.log");
  const config = join(dir, "tinyproxy.conf");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "Listen 127.0.0.1",
      "Timeout 60",
      `LogFile "${logFile}"`,
      // Connect level logs each request line (CONNECT host:port, or the absolute URL) and no headers
      "LogLevel Connect",
      "MaxClients 100",
      "DisableViaHeader Yes",
      // no ConnectPort line: tunnels to any port (the test sources listen on random ones)
      opts.refuse ? "Deny 127.0.0.1" : "Allow 127.0.0.1",
      "",
    ].join("\n"),
  );
  writeFileSync(logFile, "");
  const child: ChildProcess = spawn("tinyproxy", ["-d", "-c", config], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`tinyproxy did not start on ${port}: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const rawLog = () => readFileSync(logFile, "utf8");
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    rawLog,
    requests: () =>
      [...rawLog().matchAll(/Request \(file descriptor \d+\): (\S+) (\S+)/g)].map((m) => ({
        method: m[1] ?? "",
        target: m[2] ?? "",
      })),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Registers node:test hooks that start a forward proxy and stop it; returns an accessor valid inside tests. */
export function useForwardProxy(opts: ForwardProxyOptions = {}): () => ForwardProxy {
  let proxy: ForwardProxy | undefined;
  before(async () => {
    proxy = await startForwardProxy(opts);
  });
  after(() => proxy?.stop());
  return () => {
    if (!proxy) throw new Error("forward proxy used outside a test");
    return proxy;
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}
