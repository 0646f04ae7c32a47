// Runs a Quarry service as the real process it is in production
// (`node services/<name>/src/main.ts`), with its own kubeconfig.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./controlplane.ts";
import { repoRoot } from "./paths.ts";
import { waitUntil } from "./wait.ts";

export interface RunningService {
  name: string;
  pid: number;
  opsPort: number;
  logFile: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM and wait for a graceful exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logs(): string;
  ops(path: string): Promise<{ status: number; body: string }>;
}

/**
 * The node options every service chart sets (`nodeOptions` in its values.yaml; a chart test keeps
 * the two the same), so that tests and benchmarks run the processes as a cluster does.
 */
export const SERVICE_NODE_OPTIONS = "--max-semi-space-size=1 --v8-pool-size=1 --max-old-space-size=256";

export interface StartServiceOptions {
  kubeconfig: string;
  logFile: string;
  env?: Record<string, string>;
  /** Wait until /readyz answers 200 (default true). */
  waitReady?: boolean;
  /** How long to wait for /readyz (default 30 s). */
  readyTimeoutMs?: number;
  /** The script to run instead of the service's main.ts (an e2e fixture process hosting several services' code). */
  entry?: string;
}

/**
 * `QUARRY_SERVICE_TREES=<dir>` (`e2e/run.ts --as-image`): a service under services/ runs from its
 * image's tree, `<dir>/<name>/src/main.js` (deployed, type-stripped and bundled by
 * dev/image-builder's deployServiceTree), instead of its sources.
 */
export function serviceEntry(name: string, folder: string): string {
  const trees = process.env.QUARRY_SERVICE_TREES;
  if (!trees || folder !== "services") return join(repoRoot, folder, name, "src", "main.ts");
  const entry = join(trees, name, "src", "main.js");
  if (!existsSync(entry)) throw new Error(`QUARRY_SERVICE_TREES: no image tree of ${name} (${entry})`);
  return entry;
}

export async function startService(name: string, opts: StartServiceOptions): Promise<RunningService> {
  const opsPort = await freePort();
  const fd = openSync(opts.logFile, "a");
  // services/<name>, or examples/<name> for the example resolver and custom task
  const folder = existsSync(join(repoRoot, "services", name)) ? "services" : "examples";
  const entry = opts.entry ?? serviceEntry(name, folder);
  const child: ChildProcess = spawn(process.execPath, [entry], {
    stdio: ["ignore", fd, fd],
    env: {
      ...process.env,
      KUBECONFIG: opts.kubeconfig,
      // QUARRY_SERVICE_NODE_OPTIONS replaces the charts' options (a benchmark's A/B; "" for Node's defaults)
      NODE_OPTIONS: [
        process.env.NODE_OPTIONS,
        process.env.QUARRY_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS,
      ]
        .filter(Boolean)
        .join(" "),
      QUARRY_OPS_PORT: String(opsPort),
      QUARRY_OPS_HOST: "127.0.0.1",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "debug",
      ...opts.env,
    },
  });
  closeSync(fd);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const svc: RunningService = {
    name,
    pid: child.pid ?? -1,
    opsPort,
    logFile: opts.logFile,
    exited,
    kill: (signal = "SIGKILL") => {
      child.kill(signal);
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
    logs: () => readFileSync(opts.logFile, "utf8"),
    ops: async (path) => {
      const res = await fetch(`http://127.0.0.1:${opsPort}${path}`);
      return { status: res.status, body: await res.text() };
    },
  };
  if (opts.waitReady ?? true) {
    const died = exited.then(() => {
      throw new Error(`${name} exited before it was ready; log:\n${svc.logs().slice(-3000)}`);
    });
    try {
      await Promise.race([
        waitUntil(`${name} /readyz`, async () => (await svc.ops("/readyz")).status === 200, {
          timeoutMs: opts.readyTimeoutMs ?? 30_000,
        }),
        died,
      ]);
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
    died.catch(() => {});
  }
  return svc;
}
