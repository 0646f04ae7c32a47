// Runs inside a private network namespace (see netns.ts): listens on 127.0.0.1:<port>, the
// apiserver's own address, and carries each connection over a Unix socket (which crosses network
// namespaces) to the host, where the apiserver answers; then runs the program and passes its
// exit on. TLS goes through untouched, so the program's kubeconfig is the host's.
// Usage: node netns-bridge.ts <unix socket> <port> <program> [args...]
import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { constants } from "node:os";

const [socketPath, port, program, ...args] = process.argv.slice(2);
if (!socketPath || !port || !program) {
  console.error("usage: netns-bridge.ts <unix socket> <port> <program> [args...]");
  process.exit(2);
}

let child: ChildProcess | undefined;
const server = createServer((inside) => {
  const host = connect(socketPath);
  inside.pipe(host).pipe(inside);
  inside.on("error", () => host.destroy());
  host.on("error", () => inside.destroy());
});
server.listen(Number(port), "127.0.0.1", () => {
  child = spawn(program, args, { stdio: "inherit" });
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
});
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (child) child.kill(sig);
    else process.exit(0);
  });
}
