// A TCP proxy between one service and kube-apiserver (TLS passes through, so
// the service still verifies the apiserver's certificate). stall() freezes every
// connection open at that moment: nothing is forwarded either way any more and
// nothing is closed, so an established watch goes silent exactly as behind a
// dead NAT entry or a hung peer. New connections are forwarded as usual, so only
// the watchdog of the service's informers can recover the frozen watches.
import { connect, createServer, type Server, type Socket } from "node:net";

export interface StallProxy {
  /** https://127.0.0.1:PORT, the server a kubeconfig names instead of the apiserver. */
  readonly server: string;
  /** Freezes every open connection; returns how many it froze. */
  stall(): number;
  /** Connections frozen so far (they stay open until close()). */
  readonly frozen: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startStallProxy(upstream: { host: string; port: number }): Promise<StallProxy> {
  const live = new Set<[Socket, Socket]>();
  const frozen: Socket[] = [];
  let accepted = 0;
  const srv: Server = createServer((down) => {
    accepted++;
    const up = connect(upstream.port, upstream.host);
    const pair: [Socket, Socket] = [down, up];
    live.add(pair);
    const end = () => {
      live.delete(pair);
      down.destroy();
      up.destroy();
    };
    down.pipe(up);
    up.pipe(down);
    down.on("error", end).on("close", end);
    up.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const addr = srv.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    server: `https://127.0.0.1:${port}`,
    get frozen() {
      return frozen.length;
    },
    get accepted() {
      return accepted;
    },
    stall: () => {
      let n = 0;
      for (const pair of [...live]) {
        const [down, up] = pair;
        live.delete(pair);
        // detach the pair: the service's side stays open and unanswered, the apiserver's side goes
        down.unpipe(up);
        up.unpipe(down);
        down.removeAllListeners("close").removeAllListeners("error");
        down.on("error", () => {});
        down.pause();
        up.removeAllListeners("close").removeAllListeners("error");
        up.on("error", () => {});
        up.destroy();
        frozen.push(down);
        n++;
      }
      return n;
    },
    close: async () => {
      for (const s of frozen) s.destroy();
      for (const [down, up] of live) {
        down.destroy();
        up.destroy();
      }
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}
