// More host ports for a process in a network namespace of its own (netns.ts bridges only the
// apiserver): per port, one more netns-bridge.ts chained in front of the program, listening
// on 127.0.0.1:<port> inside (so the program's URLs are the host's), and here a Unix socket server
// carrying each connection on to 127.0.0.1:<port>.
import { rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const bridgeScript = join(dirname(fileURLToPath(import.meta.url)), "netns-bridge.ts");

export interface HostPorts {
  /** Program and args to give startInNetns: the chained bridges, then `program args`. */
  wrap(program: string, args: string[]): { program: string; args: string[] };
  close(): Promise<void>;
}

/** Host-side ends for `ports` (each a TCP port on 127.0.0.1), sockets named `<socketPrefix>-<port>.sock`. */
export async function bridgeHostPorts(ports: readonly number[], socketPrefix: string): Promise<HostPorts> {
  const servers: { port: number; path: string; server: Server; open: Set<Socket> }[] = [];
  for (const port of ports) {
    const path = `${socketPrefix}-${port}.sock`;
    rmSync(path, { force: true });
    const open = new Set<Socket>();
    const server = createServer((inside) => {
      const host = connect(port, "127.0.0.1");
      for (const s of [inside, host]) {
        open.add(s);
        s.once("close", () => open.delete(s));
      }
      inside.pipe(host).pipe(inside);
      inside.on("error", () => host.destroy());
      host.on("error", () => inside.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, resolve);
    });
    servers.push({ port, path, server, open });
  }
  return {
    wrap: (program, args) => {
      const chain = servers.flatMap((s) => [process.execPath, bridgeScript, s.path, String(s.port)]);
      const all = [...chain, program, ...args];
      return { program: all[0]!, args: all.slice(1) };
    },
    close: async () => {
      for (const s of servers) {
        for (const sock of s.open) sock.destroy();
        await new Promise<void>((resolve) => s.server.close(() => resolve()));
        rmSync(s.path, { force: true });
      }
    },
  };
}
