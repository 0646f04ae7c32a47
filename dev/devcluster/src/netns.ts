// Runs a program in a network namespace of its own (`unshare --net`, root), reaching the test
// apiserver through a Unix socket bridge (netns-bridge.ts inside, a socket server here), so the
// ports it binds whatever it is told (Tekton's :8080 probes, :9090 metrics, :8008 profiling)
// collide with nothing on the host or in another namespace. The apiserver is the one peer it
// can reach: nothing else on the host is in its namespace.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export interface NetnsOptions {
  program: string;
  args: string[];
  env: Record<string, string>;
  /** The apiserver's URL (https://127.0.0.1:<port>): the bridge listens on that port inside. */
  server: string;
  /** Where the host end of the bridge listens (a path short enough for a socket: < 108 bytes). */
  socketPath: string;
  logFile: string;
}

export interface NetnsProcess {
  /** The namespace's first process (the bridge); the program is its child. */
  pid: number;
  logFile: string;
  logs(): string;
  /** The exit code once exited, else undefined. */
  exitCode(): number | undefined;
  /** SIGTERM to the bridge and the program, SIGKILL after 10 s; closes the bridge. */
  stop(): Promise<void>;
}

export async function startInNetns(opts: NetnsOptions): Promise<NetnsProcess> {
  const api = new URL(opts.server);
  rmSync(opts.socketPath, { force: true });
  const open = new Set<Socket>();
  const bridge: Server = createServer((fromNs) => {
    const toApi = connect(Number(api.port), api.hostname);
    for (const s of [fromNs, toApi]) {
      open.add(s);
      s.once("close", () => open.delete(s));
    }
    fromNs.pipe(toApi).pipe(fromNs);
    fromNs.on("error", () => toApi.destroy());
    toApi.on("error", () => fromNs.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    bridge.once("error", reject);
    bridge.listen(opts.socketPath, resolve);
  });
  const fd = openSync(opts.logFile, "a");
  const child: ChildProcess = spawn(
    "unshare",
    [
      "--net",
      "--",
      "sh",
      "-c",
      'ip link set lo up && exec "$0" "$@"',
      process.execPath,
      join(here, "netns-bridge.ts"),
      opts.socketPath,
      api.port,
      opts.program,
      ...opts.args,
    ],
    // its own process group: stop() signals the bridge and the program together
    {
      stdio: ["ignore", fd, fd],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...opts.env },
      detached: true,
    },
  );
  closeSync(fd);
  let code: number | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (c, s) => {
      code = c ?? (s ? 128 : 1);
      resolve();
    }),
  );
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  return {
    pid: child.pid ?? -1,
    logFile: opts.logFile,
    logs: () => readFileSync(opts.logFile, "utf8"),
    exitCode: () => code,
    stop: async () => {
      if (code === undefined) {
        signalGroup("SIGTERM");
        const timer = setTimeout(() => signalGroup("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
        // the program may outlive the bridge that started it
        signalGroup("SIGKILL");
      }
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => bridge.close(() => resolve()));
      rmSync(opts.socketPath, { force: true });
    },
  };
}
