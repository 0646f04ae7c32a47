// The Kubernetes channel protocol of the pods/exec subresource over a
// WebSocket, as pure logic (ws-exec.ts does the I/O): which protocols are
// offered, the exec path, and the messages' framing. Each binary message is
// one channel byte followed by that channel's bytes: 0 stdin, 1 stdout,
// 2 stderr, 3 the error channel (one metav1.Status as JSON, v4 and later),
// 4 terminal resize; v5 adds 255, "this channel is closed" (its byte after).
// Only v5 and v4 are offered: both carry the exit as a Status; v1–v3 carried
// plain text, and every supported apiserver speaks v4.
import type { ExecOutcome, PodRef } from "./copy.ts";

/** In preference order, as Sec-WebSocket-Protocol. */
export const EXEC_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"] as const;

export const Channel = {
  stdin: 0,
  stdout: 1,
  stderr: 2,
  error: 3,
  resize: 4,
  /** v5: the channel in the next byte has no more data */
  close: 255,
} as const;

/** The exec subresource with stdout and stderr, no stdin, no tty; `command` one argument per parameter. */
export function execPath(target: PodRef, command: readonly string[]): string {
  const query = new URLSearchParams({
    container: target.container,
    stdout: "true",
    stderr: "true",
    stdin: "false",
    tty: "false",
  });
  for (const arg of command) query.append("command", arg);
  const ns = encodeURIComponent(target.namespace);
  return `/api/v1/namespaces/${ns}/pods/${encodeURIComponent(target.pod)}/exec?${query}`;
}

/** The WebSocket URL for `path` on `server` (http(s) becomes ws(s); a path prefix is kept). */
export function webSocketUrl(server: string, path: string): string {
  const url = new URL(server.replace(/\/$/, "") + path);
  url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
  return url.href;
}

/** The part of metav1.Status the exec's error channel carries. */
export interface ExecStatus {
  status?: string;
  reason?: string;
  message?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
}

const MAX_MESSAGE_CHARS = 300;

/** The command's exit from the status frame: Success is 0; NonZeroExitCode carries the code. */
export function execOutcome(status: ExecStatus): ExecOutcome {
  if (status.status === "Success") return { exitCode: 0, message: "" };
  const code = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
  const exitCode = status.reason === "NonZeroExitCode" && code !== undefined ? Number(code) : undefined;
  return {
    exitCode: Number.isInteger(exitCode) ? exitCode : undefined,
    message: (status.message ?? status.reason ?? "exec failed").slice(0, MAX_MESSAGE_CHARS),
  };
}

/**
 * Splits the server's messages by channel: stdout and stderr to their sinks as they arrive, the
 * error channel gathered until it holds a whole Status, which `push` then returns.
 */
export class ChannelDemux {
  private readonly stdout: (chunk: Uint8Array) => void;
  private readonly stderr: (chunk: Uint8Array) => void;
  private readonly decoder = new TextDecoder();
  private status = "";

  constructor(stdout: (chunk: Uint8Array) => void, stderr: (chunk: Uint8Array) => void) {
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /** One binary message; the command's exit once the error channel holds a Status. */
  push(message: Uint8Array): ExecOutcome | undefined {
    // the server opens each channel with an empty message; a v5 close carries no data
    if (message.length < 2 || message[0] === Channel.close) return undefined;
    const data = message.subarray(1);
    switch (message[0]) {
      case Channel.stdout:
        this.stdout(data);
        return undefined;
      case Channel.stderr:
        this.stderr(data);
        return undefined;
      case Channel.error:
        this.status += this.decoder.decode(data, { stream: true });
        return this.parsed();
      default:
        // stdin and resize are the client's to send; nothing else is defined
        return undefined;
    }
  }

  /**
   * What the error channel said once the connection has closed: a Status written in pieces that
   * never became valid JSON is kept as the message (no exit code); undefined when it said nothing.
   */
  end(): ExecOutcome | undefined {
    const text = (this.status + this.decoder.decode()).trim();
    if (text === "") return undefined;
    return this.parsed() ?? { exitCode: undefined, message: text.slice(0, MAX_MESSAGE_CHARS) };
  }

  private parsed(): ExecOutcome | undefined {
    let status: unknown;
    try {
      status = JSON.parse(this.status);
    } catch {
      return undefined; // not whole yet
    }
    if (typeof status !== "object" || status === null) return undefined;
    return execOutcome(status as ExecStatus);
  }
}

/** What the opening handshake came to, as an interceptor on its dispatcher saw it. */
export type Handshake =
  | { kind: "pending" }
  | { kind: "refused"; status: number }
  | { kind: "failed"; error: Error }
  | { kind: "upgraded"; protocol: string | undefined };

/**
 * Why the WebSocket did not open. A refusal reads as @kubernetes/client-node's exec (the `ws`
 * package) put it before, so operators and logs see the same error.
 */
export function handshakeFailure(handshake: Handshake): string {
  switch (handshake.kind) {
    case "refused":
      return `Unexpected server response: ${handshake.status}`;
    case "failed":
      return handshake.error.message || handshake.error.name;
    case "upgraded":
      if (handshake.protocol === undefined)
        return `the apiserver accepted none of the exec protocols ${EXEC_PROTOCOLS.join(", ")}`;
      if (!(EXEC_PROTOCOLS as readonly string[]).includes(handshake.protocol))
        return `the apiserver chose exec protocol ${handshake.protocol}, not one of ${EXEC_PROTOCOLS.join(", ")}`;
      return "the WebSocket handshake failed after the upgrade";
    case "pending":
      return "the connection closed during the WebSocket handshake";
  }
}
