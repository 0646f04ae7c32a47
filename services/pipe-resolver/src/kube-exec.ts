// ExecFn over the pods/exec subresource through @kubernetes/client-node's Exec
// (WebSocket, channel protocol v5 down to v1): only for the kubeconfigs that
// the library reads rather than @quarry/kube (exec plugins, auth providers,
// proxy-url, several files in KUBECONFIG). Everything else uses ws-exec.ts.
// wiring.ts imports this file on the first exec; such a process has loaded
// the library at start already (it read the kubeconfig), so that import is
// cheap.
// The exec's streams are this call's own Writables (the library's default
// stream set is the process's stdio, which a v5 close frame would end).
import { Readable, Writable } from "node:stream";
import { Exec, type KubeConfig, type V1Status } from "@kubernetes/client-node";
// not re-exported by the package's index; the package has no exports map, so the file is reachable
import { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import type { ExecFn, ExecOutcome } from "./copy.ts";
import { execOutcome } from "./exec-channels.ts";

function sink(write: (chunk: Uint8Array) => void): Writable {
  const w = new Writable({
    write(chunk: Buffer, _encoding, done) {
      write(chunk);
      done();
    },
  });
  // the library may end a stream twice (close frame, then status): never an unhandled 'error'
  w.on("error", () => {});
  return w;
}

/** `kc`: the client's own source, loaded by the library. */
export function kubeExec(kc: KubeConfig): ExecFn {
  return async (target, command, io) => {
    io.signal.throwIfAborted();
    const stdout = sink((c) => io.stdout(c));
    const stderr = sink((c) => io.stderr(c));
    const handler = new WebSocketHandler(kc, undefined, { stdin: Readable.from([]), stdout, stderr });
    let status: V1Status | undefined;
    const connecting = new Exec(kc, handler).exec(
      target.namespace,
      target.pod,
      target.container,
      [...command],
      stdout,
      stderr,
      null,
      false,
      (s) => {
        status = s;
      },
    );
    // the upgrade cannot be cancelled: stop waiting on abort, and close a socket that opens late
    const ws = await new Promise<Awaited<typeof connecting>>((resolve, reject) => {
      const onAbort = () => reject(io.signal.reason);
      io.signal.addEventListener("abort", onAbort, { once: true });
      connecting.then(
        (socket) => {
          io.signal.removeEventListener("abort", onAbort);
          if (io.signal.aborted) socket.close();
          else resolve(socket);
        },
        (err: unknown) => {
          io.signal.removeEventListener("abort", onAbort);
          reject(
            new Error(
              `exec in pod ${target.namespace}/${target.pod}: ${(err as Error).message ?? String(err)}`,
            ),
          );
        },
      );
    });
    return new Promise<ExecOutcome>((resolve, reject) => {
      const onAbort = () => {
        ws.close();
        reject(io.signal.reason);
      };
      if (io.signal.aborted) {
        onAbort();
        return;
      }
      io.signal.addEventListener("abort", onAbort, { once: true });
      ws.on("error", (err: Error) => {
        io.signal.removeEventListener("abort", onAbort);
        reject(new Error(`exec in pod ${target.namespace}/${target.pod}: ${err.message}`));
      });
      ws.on("close", () => {
        io.signal.removeEventListener("abort", onAbort);
        if (status) resolve(execOutcome(status));
        else
          reject(
            new Error(
              `exec in pod ${target.namespace}/${target.pod}: the connection closed before the command's exit status`,
            ),
          );
      });
    });
  };
}
