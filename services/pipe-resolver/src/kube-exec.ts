// ExecFn over the pods/exec subresource: @kubernetes/client-node's Exec
// (WebSocket, channel protocol v5 down to v1) with the runtime's KubeConfig.
// The library is imported at start, not on the first exec: it costs ~85 MiB of
// RSS (the one service that still pays it), but importing it under load made
// the first copy take over 5 s (e2e pipe-load); an exec of our own over a
// WebSocket would remove both.
// The exec's streams are this call's own Writables (the library's default
// stream set is the process's stdio, which a v5 close frame would end).
import { Readable, Writable } from "node:stream";
import { Exec, type KubeConfig, type V1Status } from "@kubernetes/client-node";
// not re-exported by the package's index; the package has no exports map, so the file is reachable
import { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import type { ExecFn, ExecOutcome } from "./copy.ts";

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

/** The command's exit from the status frame: Success is 0; NonZeroExitCode carries the code. */
export function execOutcome(status: V1Status): ExecOutcome {
  if (status.status === "Success") return { exitCode: 0, message: "" };
  const code = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
  const exitCode = status.reason === "NonZeroExitCode" && code !== undefined ? Number(code) : undefined;
  return {
    exitCode: Number.isInteger(exitCode) ? exitCode : undefined,
    message: (status.message ?? status.reason ?? "exec failed").slice(0, 300),
  };
}

/** `kubeConfig` is read once, on the first exec (the client's own source, loaded by the library). */
export function kubeExec(kubeConfig: () => Promise<KubeConfig>): ExecFn {
  let loaded: Promise<KubeConfig> | undefined;
  return async (target, command, io) => {
    io.signal.throwIfAborted();
    loaded ??= kubeConfig();
    const kc = await loaded;
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
